import { afterAll, describe, expect, it } from "vitest";
import { findVersion, loadRegistry } from "../../../hub/registry/index.ts";
import { readLockfile, writeLockfile } from "../../../hub/store/lockfile.ts";
import { prepareEnvironments } from "../../../hub/train/prepare-environments.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { smallQuickstart } from "./helpers.ts";

afterAll(removeTempDirs);

describe("prepareEnvironments", () => {
  it("reinstalls an environment whose installed build is not the one the registry pins now (an edited plugin re-packed)", { timeout: 120_000 }, async () => {
    const config = await smallQuickstart({ steps: 1, checkpointEvery: 100, batchTasks: 2, groupSize: 2, concurrency: 2 });
    const project = tempDir("prepare-stale");
    const pinned = findVersion((await loadRegistry()).registry, "arith").entry.sha256;
    const prepare = async (): Promise<string[]> => {
      const lines: string[] = [];
      const envs = await prepareEnvironments(config, { projectDir: project, maxInstances: 2, log: (l) => lines.push(l) });
      await Promise.all(envs.map((e) => e.runtime.close()));
      return lines;
    };
    await prepare();
    expect(readLockfile(project).environments["arith"]?.sha256).toBe(pinned);
    expect((await prepare()).join("\n")).not.toContain("reinstalling");

    // The store holds an older build (the registry was re-pinned after an edit): the run must not train on it.
    const lock = readLockfile(project);
    lock.environments["arith"]!.sha256 = "0".repeat(64);
    writeLockfile(project, lock);
    const lines = (await prepare()).join("\n");
    expect(lines).toContain(`the registry pins another build (sha256 ${pinned.slice(0, 12)}, installed 000000000000); reinstalling`);
    expect(readLockfile(project).environments["arith"]?.sha256).toBe(pinned);
  });
});
