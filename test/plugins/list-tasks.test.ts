import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EnvironmentRuntime, openEnvironment } from "../../plugins/index.ts";
import { loadFixture } from "./fixture-manifest.ts";

describe("listTasks", () => {
  const fixture = loadFixture("vm-faulty");
  let rt: EnvironmentRuntime;
  let data: string;
  beforeAll(async () => {
    data = await mkdtemp(join(tmpdir(), "aj-data-"));
    await writeFile(join(data, "user-tasks.jsonl"), '{"id":"u1","data":{"from":"user"}}\n');
    rt = await openEnvironment({ ...fixture, warm: 0 });
  });
  afterAll(async () => {
    await rt.close();
    await rm(data, { recursive: true, force: true });
  });

  it("reads a file split from the plugin folder, filling in the split name", async () => {
    expect(await rt.listTasks("train")).toEqual([
      { id: "t1", split: "train", data: {} },
      { id: "t2", split: "train", data: { x: 2 } },
      { id: "t3", split: "other", data: null },
    ]);
  });

  it("generates a split in the sandbox, the same for the same seed", async () => {
    const a = await rt.listTasks("gen", { seed: 7 });
    expect(a).toHaveLength(5);
    expect(a[0]).toEqual({ id: "gen-7-0", split: "gen", data: { n: 7000 } });
    expect(await rt.listTasks("gen", { seed: 7 })).toEqual(a);
  });

  it("refuses an external split without a data dir, and reads it with one", async () => {
    await expect(rt.listTasks("user")).rejects.toMatchObject({ code: "AJ_ERR_PLUGIN_EXTERNAL_SPLIT" });
    const withData = await openEnvironment({ ...fixture, warm: 0, dataDir: data });
    expect(await withData.listTasks("user")).toEqual([{ id: "u1", split: "user", data: { from: "user" } }]);
    expect(await withData.listTasks("train")).toHaveLength(3);
    await withData.close();
  });

  it("names the known splits when asked for an unknown one", async () => {
    await expect(rt.listTasks("nope")).rejects.toMatchObject({ code: "AJ_ERR_PLUGIN_UNKNOWN_SPLIT" });
  });
});
