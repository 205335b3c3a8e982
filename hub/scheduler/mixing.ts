/** Mixing weights over steps, and exact per-environment quotas for a batch. */

export interface WeightSchedule {
  kind: "constant" | "linear" | "cosine";
  start: number;
  end: number;
  /** Step at which the end share is reached (and kept). */
  steps: number;
}

export type Weight = number | WeightSchedule;

export function weightAt(weight: Weight, step: number): number {
  if (typeof weight === "number") return weight;
  const t = Math.min(Math.max(step / weight.steps, 0), 1);
  switch (weight.kind) {
    case "constant":
      return weight.start;
    case "linear":
      return weight.start + (weight.end - weight.start) * t;
    case "cosine":
      return weight.end + ((weight.start - weight.end) * (1 + Math.cos(Math.PI * t))) / 2;
  }
}

/** Each environment's share of the batch at `step` (they sum to 1; all 0 when every weight is 0). */
export function sharesAt(weights: readonly Weight[], step: number): number[] {
  const raw = weights.map((w) => Math.max(0, weightAt(w, step)));
  const total = raw.reduce((a, b) => a + b, 0);
  return total > 0 ? raw.map((w) => w / total) : raw.map(() => 0);
}

/**
 * The first step at which every weight is 0, or null when there is none. A batch planned there would
 * hold no group; schedules move monotonically from start to end, so steps 0 and each schedule's end are
 * the only places to look.
 */
export function allZeroStep(weights: readonly Weight[]): number | null {
  const ends = weights.flatMap((w) => (typeof w === "number" ? [] : [w.steps]));
  for (const step of [0, ...ends].sort((a, b) => a - b)) {
    if (weights.every((w) => weightAt(w, step) <= 0)) return step;
  }
  return null;
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
