/** Mixing weights over steps, and exact per-environment quotas for a batch. */

import { type Weight, weightAt } from "../../server/config/index.ts";

export { allZeroStep, weightAt, type Weight, type WeightSchedule } from "../../server/config/index.ts";

/** Each environment's share of the batch at `step` (they sum to 1; all 0 when every weight is 0). */
export function sharesAt(weights: readonly Weight[], step: number): number[] {
  const raw = weights.map((w) => Math.max(0, weightAt(w, step)));
  const total = raw.reduce((a, b) => a + b, 0);
  return total > 0 ? raw.map((w) => w / total) : raw.map(() => 0);
}

/** Largest-remainder apportionment of `seats` by non-negative claims; ties go to the earlier entry. */
export function apportion(claims: readonly number[], seats: number): number[] {
  const total = claims.reduce((a, b) => a + Math.max(0, b), 0);
  if (total <= 0 || seats <= 0) return claims.map(() => 0);
  const exact = claims.map((c) => (Math.max(0, c) * seats) / total);
  const out = exact.map((x) => Math.floor(x));
  let left = seats - out.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => ({ i, frac: x - Math.floor(x) })).sort((a, b) => b.frac - a.frac || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    out[i]! += 1;
    left -= 1;
  }
  return out;
}

/** What the quotas have given so far: serialisable, so a resumed run keeps the same long-run mix. */
export interface MixLedger {
  /** Cumulative ideal seats (share x batch size, summed over batches), per environment. */
  target: number[];
  /** Cumulative seats given, per environment. */
  given: number[];
}

/**
 * The quotas of one batch: `seats` split by largest remainder over each environment's deficit (its
 * cumulative ideal minus what it got). Each batch is exact, and an environment whose share rounds to
 * zero in one small batch gets its seat in a later one, so none is starved.
 */
export function planQuotas(ledger: MixLedger, shares: readonly number[], seats: number): { quotas: number[]; ledger: MixLedger } {
  const target = ledger.target.map((t, i) => (shares[i]! > 0 ? t + shares[i]! * seats : ledger.given[i]!));
  const deficit = target.map((t, i) => (shares[i]! > 0 ? Math.max(0, t - ledger.given[i]!) : 0));
  const quotas = apportion(deficit.some((d) => d > 0) ? deficit : shares, seats);
  return { quotas, ledger: { target, given: ledger.given.map((g, i) => g + quotas[i]!) } };
}
