import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { configChanges, describeConfigChanges } from "../../../hub/run/config-changes.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { smallConfig } from "./helpers.ts";

afterAll(removeTempDirs);

describe("configChanges", () => {
  it("names the fields where a config differs from the run's config.yaml, run.dir aside", async () => {
    const dir = tempDir("config-changes");
    const config = await smallConfig("tasks", 4);
    writeFileSync(join(dir, "config.yaml"), stringify({ ...config, run: { ...config.run, dir } }));
    expect(configChanges(dir, { ...config, run: { ...config.run, dir: "elsewhere" } })).toEqual([]);
    const changed = { ...config, run: { ...config.run, steps: 12 }, batching: { ...config.batching, groupSize: 2 } };
    expect(configChanges(dir, changed)).toEqual(["run.steps", "batching.groupSize"]);
    expect(describeConfigChanges(configChanges(dir, changed))).toBe(
      "this config differs from the one the run saved (config.yaml) in run.steps, batching.groupSize: the run continues with this one",
    );
    expect(describeConfigChanges([])).toBeNull();
    // no config.yaml (or an unreadable one): nothing to compare
    expect(configChanges(tempDir("config-changes-none"), config)).toEqual([]);
  });
});
