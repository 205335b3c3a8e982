import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseRunConfig, type RunConfig } from "../../server/config/index.ts";

/** How many changed fields a change names before it says "and n more". */
const SHOWN = 6;

/**
 * The fields where `config` differs from the one the run in `runDir` saved (its config.yaml), as dotted
 * paths (`run.steps`, `policies.main.lr`); `run.dir` is the run's own and not compared. Empty when they
 * agree or when the directory has no readable config.yaml (a run that saved none has nothing to compare).
 */
export function configChanges(runDir: string, config: RunConfig): string[] {
  const file = join(runDir, "config.yaml");
  if (!existsSync(file)) return [];
  const saved = parseRunConfig(readFileSync(file, "utf8"), file);
  if (saved.kind !== "ok") return [];
  const out: string[] = [];
  diff({ ...saved.config, run: { ...saved.config.run, dir: "" } }, { ...config, run: { ...config.run, dir: "" } }, "", out);
  return out;
}

/** What a resumed run's log says of `changes`, or null when there are none. */
export function describeConfigChanges(changes: readonly string[]): string | null {
  if (changes.length === 0) return null;
  const named = changes.slice(0, SHOWN).join(", ") + (changes.length > SHOWN ? ` and ${changes.length - SHOWN} more` : "");
  return `this config differs from the one the run saved (config.yaml) in ${named}: the run continues with this one`;
}

function diff(a: unknown, b: unknown, path: string, out: string[]): void {
  if (isRecord(a) && isRecord(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[key], b[key], path ? `${path}.${key}` : key, out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
