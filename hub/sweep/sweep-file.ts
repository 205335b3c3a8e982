import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { checkRunConfig, formatConfigIssues, loadRunConfig, type RunConfig } from "../../server/config/index.ts";
import { InvalidSweepFileError, SweepFileNotFoundError } from "./errors.ts";

/** A value range of random search: uniform in [min, max], or log-uniform with `log`; rounded with `int`. */
export const RangeSchema = z
  .object({
    min: z.number().describe("Lowest value"),
    max: z.number().describe("Highest value"),
    log: z.boolean().default(false).describe("Sample the logarithm uniformly (learning rates); min must be above 0"),
    int: z.boolean().default(false).describe("Round to an integer"),
  })
  .strict()
  .refine((r) => r.min <= r.max, "min must not exceed max")
  .refine((r) => !r.log || r.min > 0, "log ranges need min > 0");
export type ValueRange = z.infer<typeof RangeSchema>;

/** The values of one swept field: a list (grid: every one; random: a uniform pick) or a range (random only). */
export const ParameterSchema = z.union([z.array(z.unknown()), RangeSchema], {
  error: (issue) => (issue.code === "invalid_union" ? "expected a list of values ([1e-4, 3e-4]), or a range {min, max, log?, int?} for search: random" : undefined),
});
export type ParameterSpec = z.infer<typeof ParameterSchema>;

/** The sweep file (`agentjet sweep <sweep.yaml>`): a base run config and the fields to vary. */
export const SweepFileSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "letters, digits, '.', '_' and '-' (it names the campaign directory)")
      .describe("The sweep's name; the campaign directory is sweeps/<name> unless --campaign-dir says otherwise"),
    base: z.string().optional().describe("The base run config file, relative to the sweep file"),
    config: z.record(z.string(), z.unknown()).optional().describe("The base run config inline (instead of `base`)"),
    search: z.enum(["grid", "random"]).default("grid").describe("grid: every combination of the parameters' values; random: `samples` draws"),
    samples: z.number().int().positive().optional().describe("random: how many configs to draw"),
    seed: z.number().int().default(0).describe("random: the seed of the draws"),
    parameters: z
      .record(z.string(), ParameterSchema)
      .default({})
      .describe("Field path (as in docs/run-config.md, e.g. policies.main.optimizer.lr, environments[arith].weight) -> values or {min, max, log, int}"),
    seeds: z.array(z.number().int()).min(1).optional().describe("Each config runs once per seed (run.seed and every embedded model's seed); default: the base's run.seed"),
    parallel: z.number().int().positive().default(1).describe("Runs at a time (--parallel overrides it)"),
    overrides: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("Field path -> value set in every run before the parameters; an object value is merged into the field's object"),
  })
  .strict()
  .superRefine((s, ctx) => {
    if ((s.base === undefined) === (s.config === undefined)) ctx.addIssue({ code: "custom", path: ["base"], message: "give exactly one of `base` (a file) or `config` (inline)" });
    if (s.search === "random" && s.samples === undefined) ctx.addIssue({ code: "custom", path: ["samples"], message: "search: random needs samples: N" });
    if (s.search === "grid" && s.samples !== undefined) ctx.addIssue({ code: "custom", path: ["samples"], message: "samples is for search: random" });
  });
export type SweepFile = z.infer<typeof SweepFileSchema>;

export interface LoadedSweep {
  sweep: SweepFile;
  /** The base run config, validated (defaults filled). */
  base: RunConfig;
  /** The sweep file's absolute path. */
  source: string;
}

/** Reads and validates a sweep file and its base config; throws a coded SweepError naming what is wrong. */
export async function loadSweepFile(path: string): Promise<LoadedSweep> {
  const source = resolve(path);
  let text: string;
  try {
    text = await readFile(source, "utf8");
  } catch (err) {
    throw new SweepFileNotFoundError(path, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
  }
  return parseSweepFile(text, source);
}

/** Validates a sweep file's text; `source` is its absolute path (`base` resolves from its folder). */
export async function parseSweepFile(text: string, source: string): Promise<LoadedSweep> {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const at = e.linePos?.[0] ? `:${e.linePos[0].line}:${e.linePos[0].col}` : "";
    throw new InvalidSweepFileError(`${source}${at}`, `not valid YAML: ${e.message.split("\n")[0]}`);
  }
  const parsed = SweepFileSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(file)"}: ${i.message}`);
    throw new InvalidSweepFileError(source, issues.join("; "));
  }
  const sweep = parsed.data;
  if (sweep.base !== undefined) {
    const basePath = resolve(dirname(source), sweep.base);
    const loaded = await loadRunConfig(basePath);
    if (loaded.kind === "unreadable") throw new SweepFileNotFoundError(basePath, `the sweep's base config: ${loaded.message}`);
    if (loaded.kind === "invalid") throw new InvalidSweepFileError(source, `base config is not a valid run config:\n${formatConfigIssues(loaded)}`);
    return { sweep, base: loaded.config, source };
  }
  // the run config's own checks, so a misspelt field is refused here too
  const inline = checkRunConfig(sweep.config ?? {}, "config");
  if (inline.kind !== "ok") {
    const issues = inline.kind === "invalid" ? inline.issues.map((i) => `config.${i.path}: ${i.message}${i.hint === undefined ? "" : ` (hint: ${i.hint})`}`) : [inline.message];
    throw new InvalidSweepFileError(source, `config is not a valid run config: ${issues.join("; ")}`);
  }
  return { sweep, base: inline.config, source };
}
