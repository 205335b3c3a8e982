import { type RunConfig, RunConfigSchema } from "../../server/config/index.ts";
import { createRng } from "../scheduler/rng.ts";
import { EmptySearchError, InvalidRunConfigError } from "./errors.ts";
import { checkFieldPath, parseFieldPath, type Segment, setField } from "./field-paths.ts";
import type { LoadedSweep, ParameterSpec, ValueRange } from "./sweep-file.ts";

/** One run of a sweep: a config (the swept values) and a seed. */
export interface PlannedRun {
  /** `03-lr=0.0003_groupSize=8_s2`: its index (1-based), its values and seed; names its run directory. */
  id: string;
  /** The swept fields' values, path -> value, in the sweep file's order. */
  params: Record<string, unknown>;
  seed: number;
  /** The same for every seed of one config: what the report groups by. */
  configKey: string;
  /** `lr=0.0003 groupSize=8`, or `base` when nothing but the seed varies. */
  label: string;
  /** The run's config, validated by the run config's schema (run.dir is the runner's to set). */
  config: RunConfig;
}

/** Draws of random search stop after this many tries per sample when the draws keep repeating a config. */
const MAX_DRAW_TRIES = 50;

const isRange = (p: ParameterSpec): p is ValueRange => !Array.isArray(p);

/** A value as ids and labels show it: numbers as JS prints them (3e-7, 0.0003), objects as JSON. */
export function formatValue(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v) ?? "null";
}

function drawFrom(spec: ParameterSpec, rng: () => number): unknown {
  if (!isRange(spec)) return spec[Math.floor(rng() * spec.length)];
  const u = rng();
  const x = spec.log ? Math.exp(Math.log(spec.min) + u * (Math.log(spec.max) - Math.log(spec.min))) : spec.min + u * (spec.max - spec.min);
  // Four significant digits keep ids and labels readable; a sweep cannot tell 3.0001e-4 from 3e-4 anyway.
  return spec.int ? Math.round(x) : Number(x.toPrecision(4));
}

function combinations(loaded: LoadedSweep, paths: readonly string[]): Array<unknown[]> {
  const { sweep } = loaded;
  const specs = paths.map((p) => sweep.parameters[p]!);
  if (sweep.search === "grid") {
    let combos: unknown[][] = [[]];
    for (const spec of specs) combos = combos.flatMap((c) => (spec as unknown[]).map((v) => [...c, v]));
    return combos;
  }
  const rng = createRng(sweep.seed);
  const out: unknown[][] = [];
  const seen = new Set<string>();
  for (let tries = 0; out.length < sweep.samples! && tries < sweep.samples! * MAX_DRAW_TRIES; tries++) {
    const combo = specs.map((s) => drawFrom(s, rng));
    const key = JSON.stringify(combo);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(combo);
  }
  return out;
}

/** Short names for labels: each path's last field, or the whole path where two would read the same. */
function shortNames(paths: readonly string[]): string[] {
  const last = paths.map((p) => {
    const segs = parseFieldPath(p)!;
    const tail = segs.at(-1)!;
    return tail.kind === "key" ? tail.key : p;
  });
  return last.map((n, i) => (last.filter((m) => m === n).length > 1 ? paths[i]! : n));
}

/**
 * Expands a sweep into its runs: the base config with the overrides, then each combination of the
 * parameters (grid: every one, in the file's order, the first parameter slowest; random: `samples`
 * seeded draws, no config twice) once per seed. Every path is checked against the run config's
 * schema and every expanded config validated before anything runs; throws a coded SweepError.
 */
export function expandSweep(loaded: LoadedSweep): PlannedRun[] {
  const { sweep } = loaded;
  const base = structuredClone(loaded.base) as unknown as Record<string, unknown>;
  // Runs side by side each need a port: 0 picks a free one (an override or parameter may still pin one).
  setField(base, [{ kind: "key", key: "server" }, { kind: "key", key: "port" }], 0, false);
  for (const [path, value] of Object.entries(sweep.overrides)) setField(base, checkFieldPath(path, base, value), value, true);

  const paths = Object.keys(sweep.parameters);
  const segments = new Map<string, Segment[]>();
  for (const path of paths) {
    const spec = sweep.parameters[path]!;
    segments.set(path, checkFieldPath(path, base));
    if (!isRange(spec) && spec.length === 0) throw new EmptySearchError(`parameters.${path}: an empty list of values leaves nothing to run`);
    if (isRange(spec) && sweep.search === "grid") throw new EmptySearchError(`parameters.${path}: a {min, max} range needs search: random (a grid takes a list of values)`);
  }
  if (paths.length === 0 && sweep.seeds === undefined) throw new EmptySearchError("nothing to sweep: give parameters (field path -> values) or seeds");

  const combos = combinations(loaded, paths);
  if (combos.length === 0) throw new EmptySearchError("the search drew no configs");
  const seeds = sweep.seeds ?? [loaded.base.run.seed];
  const names = shortNames(paths);
  const total = combos.length * seeds.length;
  const width = Math.max(2, String(total).length);
  const runs: PlannedRun[] = [];
  for (const combo of combos) {
    const params = Object.fromEntries(paths.map((p, i) => [p, combo[i]]));
    const parts = names.map((n, i) => `${n}=${formatValue(combo[i])}`);
    for (const seed of seeds) {
      const index = runs.length + 1;
      const slug = [...parts, `s${seed}`].join("_").replace(/[^A-Za-z0-9.=+_-]+/g, "-").slice(0, 80);
      const id = `${String(index).padStart(width, "0")}-${slug}`;
      const config = structuredClone(base);
      if (sweep.seeds !== undefined) seedConfig(config, seed);
      for (const p of paths) setField(config, segments.get(p)!, params[p], false);
      const checked = RunConfigSchema.safeParse(config);
      if (!checked.success) throw new InvalidRunConfigError(id, checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
      runs.push({ id, params, seed, configKey: JSON.stringify(combo), label: parts.join(" ") || "base", config: checked.data });
    }
  }
  return runs;
}

/** A seed sets run.seed and the weight initialisation seed of every embedded model. */
function seedConfig(config: Record<string, unknown>, seed: number): void {
  (config.run as Record<string, unknown>).seed = seed;
  for (const policy of Object.values(config.policies as Record<string, { engine?: { kind?: string; model?: Record<string, unknown> } }>)) {
    if (policy.engine?.kind === "embedded" && policy.engine.model) policy.engine.model.seed = seed;
  }
}
