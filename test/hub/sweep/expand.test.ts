import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXIT } from "../../../errors/index.ts";
import type { SweepError } from "../../../hub/sweep/errors.ts";
import { expandSweep, type PlannedRun } from "../../../hub/sweep/expand.ts";
import { parseFieldPath } from "../../../hub/sweep/field-paths.ts";
import { loadSweepFile, parseSweepFile } from "../../../hub/sweep/sweep-file.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

const BASE = `
run: { dir: runs/x, seed: 7, steps: 5 }
policies:
  main:
    engine: { kind: embedded, model: { layers: 1, dim: 16, heads: 2, context: 64, seed: 3 } }
    optimizer: { lr: 0.001 }
environments:
  - { name: arith, roles: { solver: main } }
  - { name: countdown, roles: { solver: main } }
`;

/** The sweep file's text with the base config inline (indented under `config:`). */
const inline = (sweep: string, base = BASE): string => `${sweep}\nconfig:\n${base.replace(/^/gm, "  ")}`;

async function expand(text: string): Promise<PlannedRun[]> {
  return expandSweep(await parseSweepFile(text, "/nowhere/sweep.yaml"));
}

async function failure(text: string): Promise<{ code: string; message: string }> {
  try {
    await expand(text);
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error("expected the sweep to be refused");
}

describe("sweep expansion: grid", () => {
  it("runs every combination once per seed, the first parameter slowest, seeds setting run.seed and the model seed", async () => {
    const runs = await expand(
      inline(`name: g
parameters:
  policies.main.optimizer.lr: [1e-4, 3e-4]
  batching.groupSize: [4, 8]
seeds: [1, 2]`),
    );
    expect(runs.map((r) => r.id)).toEqual([
      "01-lr=0.0001_groupSize=4_s1",
      "02-lr=0.0001_groupSize=4_s2",
      "03-lr=0.0001_groupSize=8_s1",
      "04-lr=0.0001_groupSize=8_s2",
      "05-lr=0.0003_groupSize=4_s1",
      "06-lr=0.0003_groupSize=4_s2",
      "07-lr=0.0003_groupSize=8_s1",
      "08-lr=0.0003_groupSize=8_s2",
    ]);
    const r = runs[6]!;
    expect(r.params).toEqual({ "policies.main.optimizer.lr": 3e-4, "batching.groupSize": 8 });
    expect(r.config.policies.main!.optimizer.lr).toBe(3e-4);
    expect(r.config.batching.groupSize).toBe(8);
    expect(r.config.run.seed).toBe(1);
    expect(r.config.policies.main!.engine).toMatchObject({ kind: "embedded", model: { seed: 1 } });
    // Untouched fields keep the base's values; every run gets a free port.
    expect(r.config.run.steps).toBe(5);
    expect(r.config.server.port).toBe(0);
    // Seeds of one config share its key; configs differ.
    expect(new Set(runs.map((x) => x.configKey)).size).toBe(4);
    expect(runs[0]!.configKey).toBe(runs[1]!.configKey);
    expect(runs[0]!.label).toBe("lr=0.0001 groupSize=4");
  });

  it("without seeds, keeps the base's run.seed and model seed; strategy and mixing weights by index or by name", async () => {
    const runs = await expand(
      inline(`name: g
parameters:
  batching.strategy: [episodes, valid-tasks]
  environments[countdown].weight: [0.5, { kind: linear, start: 1, end: 0, steps: 10 }]
  environments.0.weight: [2]`),
    );
    expect(runs).toHaveLength(4);
    expect(runs.map((r) => r.config.run.seed)).toEqual([7, 7, 7, 7]);
    expect(runs[0]!.config.policies.main!.engine).toMatchObject({ model: { seed: 3 } });
    expect(runs[1]!.config.batching.strategy).toBe("episodes");
    expect(runs[1]!.config.environments[1]!.weight).toEqual({ kind: "linear", start: 1, end: 0, steps: 10 });
    expect(runs[2]!.config.batching.strategy).toBe("valid-tasks");
    expect(runs[0]!.config.environments[0]!.weight).toBe(2);
    expect(runs[0]!.config.environments[1]!.weight).toBe(0.5);
  });

  it("applies overrides first (dotted paths and merged objects); a parameter wins over an override", async () => {
    const runs = await expand(
      inline(`name: g
overrides:
  run: { steps: 2 }
  eval.tasks: 4
  warmStart: { steps: 20 }
  policies.main.optimizer.lr: 9
parameters:
  policies.main.optimizer.lr: [0.1]
seeds: [5]`),
    );
    const c = runs[0]!.config;
    expect(c.run).toMatchObject({ steps: 2, dir: "runs/x", seed: 5 });
    expect(c.eval.tasks).toBe(4);
    expect(c.warmStart).toMatchObject({ steps: 20, batch: 16, source: "solver" });
    expect(c.policies.main!.optimizer.lr).toBe(0.1);
  });

  it("a seeds-only sweep is a sweep", async () => {
    const runs = await expand(inline("name: s\nseeds: [1, 2, 3]"));
    expect(runs.map((r) => [r.id, r.label, r.config.run.seed])).toEqual([
      ["01-s1", "base", 1],
      ["02-s2", "base", 2],
      ["03-s3", "base", 3],
    ]);
  });
});

describe("sweep expansion: random search", () => {
  const sweep = (seed: number): string =>
    inline(`name: r
search: random
samples: 6
seed: ${seed}
parameters:
  policies.main.optimizer.lr: { min: 1e-5, max: 1e-2, log: true }
  batching.groupSize: [2, 4, 8]
  batching.batchTasks: { min: 2, max: 9, int: true }
seeds: [1, 2]`);

  it("draws `samples` configs from the ranges and lists, seeded (the same seed draws the same), each once per seed", async () => {
    const a = await expand(sweep(11));
    expect(a).toHaveLength(12);
    const configs = a.filter((_, i) => i % 2 === 0);
    expect(new Set(configs.map((r) => r.configKey)).size).toBe(6);
    for (const r of configs) {
      const lr = r.params["policies.main.optimizer.lr"] as number;
      expect(lr).toBeGreaterThanOrEqual(1e-5);
      expect(lr).toBeLessThanOrEqual(1e-2);
      expect([2, 4, 8]).toContain(r.params["batching.groupSize"]);
      expect(Number.isInteger(r.params["batching.batchTasks"])).toBe(true);
      expect(r.config.policies.main!.optimizer.lr).toBe(lr);
    }
    // Log-uniform: some draws land below 1e-3, where a uniform draw would land 10% of the time.
    expect(configs.some((r) => (r.params["policies.main.optimizer.lr"] as number) < 1e-3)).toBe(true);
    expect((await expand(sweep(11))).map((r) => r.params)).toEqual(a.map((r) => r.params));
    expect((await expand(sweep(12))).map((r) => r.params)).not.toEqual(a.map((r) => r.params));
  });

  it("never draws one config twice: a small space gives fewer samples than asked", async () => {
    const runs = await expand(inline("name: r\nsearch: random\nsamples: 10\nparameters:\n  batching.groupSize: [2, 4]"));
    expect(runs.map((r) => r.params["batching.groupSize"]).sort()).toEqual([2, 4]);
  });
});

describe("sweep expansion: bad input is a coded usage error naming the field", () => {
  it.each([
    ["training.optimizer.lr", "'training'"],
    ["policies.mian.optimizer.lr", "'mian'"],
    ["policies.main.optimizer.learningRate", "'learningRate'"],
    ["batching.groupSize.x", "batching.groupSize"],
    ["environments[2].weight", "no element 2"],
    ["environments[aime].weight", "named 'aime'"],
    ["environments.weight", "is a list"],
    ["run..steps", "not a field path"],
  ])("unknown field %s", async (path, why) => {
    const err = await failure(inline(`name: b\nparameters:\n  ${path}: [1, 2]`));
    expect(err.code).toBe("AJ_ERR_SWEEP_UNKNOWN_FIELD");
    expect(err.message).toContain(path);
    expect(err.message).toContain(why);
  });

  it("a misspelt key inside an override's object, or an entry the base lacks; a map of values takes any key", async () => {
    const err = await failure(inline("name: b\nseeds: [1]\noverrides:\n  run: { stpes: 3 }"));
    expect(err).toMatchObject({ code: "AJ_ERR_SWEEP_UNKNOWN_FIELD", message: expect.stringContaining("run.stpes") });
    const entry = await failure(inline("name: b\nseeds: [1]\noverrides:\n  policies: { mian: { optimizer: { lr: 1 } } }"));
    expect(entry).toMatchObject({ code: "AJ_ERR_SWEEP_UNKNOWN_FIELD", message: expect.stringContaining("'mian'") });
    const deep = await failure(inline("name: b\nseeds: [1]\noverrides:\n  policies: { main: { optimizer: { lrr: 1 } } }"));
    expect(deep).toMatchObject({ code: "AJ_ERR_SWEEP_UNKNOWN_FIELD", message: expect.stringContaining("policies.main.optimizer.lrr") });
    const runs = await expand(inline("name: b\nseeds: [1]\noverrides:\n  environments[arith].options: { data: x.jsonl }\n  policies: { main: { optimizer: { lr: 0.5 } } }"));
    expect(runs[0]!.config.environments[0]!.options).toEqual({ data: "x.jsonl" });
    expect(runs[0]!.config.policies.main!.optimizer).toMatchObject({ lr: 0.5, beta1: 0.9 });
  });

  it("an empty grid, a range in a grid, nothing to sweep", async () => {
    expect(await failure(inline("name: b\nparameters:\n  batching.groupSize: []"))).toMatchObject({ code: "AJ_ERR_SWEEP_EMPTY", message: expect.stringContaining("batching.groupSize") });
    expect(await failure(inline("name: b\nparameters:\n  policies.main.optimizer.lr: { min: 0.1, max: 1 }"))).toMatchObject({
      code: "AJ_ERR_SWEEP_EMPTY",
      message: expect.stringContaining("search: random"),
    });
    expect(await failure(inline("name: b"))).toMatchObject({ code: "AJ_ERR_SWEEP_EMPTY" });
  });

  it("an expanded config the run config schema refuses", async () => {
    const err = await failure(inline("name: b\nparameters:\n  batching.groupSize: [4, 0]"));
    expect(err).toMatchObject({ code: "AJ_ERR_SWEEP_INVALID_CONFIG", message: expect.stringContaining("batching.groupSize") });
  });

  it("malformed YAML, an unknown top-level key, random without samples, both base and config", async () => {
    expect(await failure("name: [unclosed")).toMatchObject({ code: "AJ_ERR_SWEEP_INVALID_FILE", message: expect.stringContaining("YAML") });
    expect(await failure(inline("name: b\nparameter:\n  run.steps: [1]"))).toMatchObject({ code: "AJ_ERR_SWEEP_INVALID_FILE", message: expect.stringContaining("parameter") });
    expect(await failure(inline("name: b\nsearch: random\nparameters:\n  run.steps: [1]"))).toMatchObject({ code: "AJ_ERR_SWEEP_INVALID_FILE", message: expect.stringContaining("samples") });
    expect(await failure(inline("name: b\nbase: x.yaml\nseeds: [1]"))).toMatchObject({ code: "AJ_ERR_SWEEP_INVALID_FILE", message: expect.stringContaining("exactly one") });
    // a misspelt field of the inline config, which zod alone would drop
    const typo = await failure(inline("name: b\nseeds: [1]", BASE.replace("steps: 5", "stepz: 5")));
    expect(typo).toMatchObject({ code: "AJ_ERR_SWEEP_INVALID_FILE", message: expect.stringContaining("config.run.stepz: not a field") });
    expect(typo.message).toContain("did you mean 'steps'?");
  });

  // A bare value where a list belongs said only "Invalid input", naming neither a list nor a range.
  it("a parameter given one value, not a list, says what it takes; a range's own checks still speak", async () => {
    const scalar = await failure(inline("name: b\nparameters:\n  policies.main.optimizer.lr: 0.001"));
    expect(scalar).toMatchObject({ code: "AJ_ERR_SWEEP_INVALID_FILE", message: expect.stringContaining("parameters.policies.main.optimizer.lr: expected a list of values") });
    const logRange = await failure(inline("name: b\nsearch: random\nsamples: 2\nparameters:\n  policies.main.optimizer.lr: { min: 0, max: 0.1, log: true }"));
    expect(logRange.message).toContain("log ranges need min > 0");
  });

  it("reads `base` relative to the sweep file; a missing one is not-found", async () => {
    const dir = tempDir("sweep-base");
    writeFileSync(join(dir, "base.yaml"), BASE);
    writeFileSync(join(dir, "sweep.yaml"), "name: f\nbase: base.yaml\nseeds: [1, 2]\n");
    writeFileSync(join(dir, "missing.yaml"), "name: f\nbase: nope.yaml\nseeds: [1]\n");
    expect(expandSweep(await loadSweepFile(join(dir, "sweep.yaml"))).map((r) => r.config.run.seed)).toEqual([1, 2]);
    const err = (await loadSweepFile(join(dir, "missing.yaml")).catch((e: unknown) => e)) as SweepError;
    expect(err).toMatchObject({ code: "AJ_ERR_SWEEP_NOT_FOUND" });
    expect(err.exitCode).toBe(EXIT.notFound);
  });
});

describe("field paths", () => {
  it("parses keys, indices and names", () => {
    expect(parseFieldPath("environments[arith].weight.start")).toEqual([
      { kind: "key", key: "environments" },
      { kind: "name", name: "arith" },
      { kind: "key", key: "weight" },
      { kind: "key", key: "start" },
    ]);
    expect(parseFieldPath("environments.0.weight")).toEqual(parseFieldPath("environments[0].weight"));
    for (const bad of ["", "a..b", "[0].a", "a.", "a[]"]) expect(parseFieldPath(bad), bad).toBeNull();
  });
});
