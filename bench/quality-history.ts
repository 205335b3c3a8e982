import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

/** One training run's fingerprint: what it learned and the exact weights it ended with. */
export interface QualityFingerprint {
  /** The run's name in the suite (e.g. `arith`, `cocktail`). */
  run: string;
  steps: number;
  /** Per environment: mean reward and success at the last step. */
  final: Record<string, { meanReward: number; success: number }>;
  /** Per environment: mean reward at each step, in step order. */
  curve: Record<string, number[]>;
  /** sha256 of the policy `main`'s weights in the run's last checkpoint. */
  weightsSha256: string;
  wallS: number;
}

/** A fingerprint as stored in bench/history/quality.jsonl, keyed by the commit it was measured at. */
export interface QualityEntry extends QualityFingerprint {
  commit: string;
  /** The working tree had uncommitted changes (the commit alone does not name the code). */
  dirty: boolean;
  time: string;
}

export function readHistory(path: string): QualityEntry[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as QualityEntry);
}

export function appendHistory(path: string, entry: QualityEntry): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify(entry)}\n`);
}

/** The entry to compare with: the same run's last entry at another commit (or dirty state), else its last entry. */
export function baselineFor(history: readonly QualityEntry[], e: Pick<QualityEntry, "run" | "commit" | "dirty">): QualityEntry | undefined {
  const same = history.filter((h) => h.run === e.run);
  return same.filter((h) => h.commit !== e.commit || h.dirty !== e.dirty).at(-1) ?? same.at(-1);
}

const num = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(4));
const delta = (a: number, b: number): string => `${num(a)} -> ${num(b)} (${b - a >= 0 ? "+" : ""}${num(b - a)})`;

/** What changed from `base` to `cur`, one line per field (wall time always listed, as information). */
export function compareFingerprints(base: QualityFingerprint, cur: QualityFingerprint): { changed: string[]; weightsChanged: boolean } {
  const changed: string[] = [];
  const weightsChanged = base.weightsSha256 !== cur.weightsSha256;
  if (weightsChanged) changed.push(`weights hash CHANGED: ${base.weightsSha256.slice(0, 16)} -> ${cur.weightsSha256.slice(0, 16)}`);
  if (base.steps !== cur.steps) changed.push(`steps: ${base.steps} -> ${cur.steps}`);
  const envs = [...new Set([...Object.keys(base.final), ...Object.keys(cur.final)])].sort();
  for (const env of envs) {
    const a = base.final[env];
    const b = cur.final[env];
    if (!a || !b) {
      changed.push(`${env}: ${a ? "gone" : "new"}`);
      continue;
    }
    if (a.meanReward !== b.meanReward) changed.push(`${env} final meanReward: ${delta(a.meanReward, b.meanReward)}`);
    if (a.success !== b.success) changed.push(`${env} final success: ${delta(a.success, b.success)}`);
    const ca = base.curve[env] ?? [];
    const cb = cur.curve[env] ?? [];
    const diffs = cb.map((v, i) => (ca[i] === v ? undefined : `step ${i + 1} ${ca[i] === undefined ? "new" : delta(ca[i]!, v)}`)).filter(Boolean);
    if (diffs.length > 0 || ca.length !== cb.length) changed.push(`${env} curve: ${diffs.join("; ") || `length ${ca.length} -> ${cb.length}`}`);
  }
  return { changed, weightsChanged };
}
