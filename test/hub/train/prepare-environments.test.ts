import { afterAll, describe, expect, it } from "vitest";
import { buildAppWorldImage } from "../../../environments/appworld/build-image.ts";
import { findVersion, loadRegistry } from "../../../hub/registry/index.ts";
import { addEnvironment } from "../../../hub/store/index.ts";
import { readLockfile, writeLockfile } from "../../../hub/store/lockfile.ts";
import { prepareEnvironments } from "../../../hub/train/prepare-environments.ts";
import { WarmStartSchema } from "../../../server/config/run-config.ts";
import { describeDocker } from "../../helpers/docker.ts";
import { FIXTURE_DATA } from "../../environments/appworld/helpers.ts";
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

  it("refuses at the start a split the environment does not have (an unknown eval.split was accepted, then every evaluation failed)", { timeout: 120_000 }, async () => {
    const project = tempDir("prepare-splits");
    const refusal = async (edit: (c: Awaited<ReturnType<typeof smallQuickstart>>) => void): Promise<string> => {
      const config = await smallQuickstart({ steps: 1, checkpointEvery: 100, batchTasks: 2, groupSize: 2, concurrency: 2 });
      edit(config);
      const err = await prepareEnvironments(config, { projectDir: project, maxInstances: 2, log: () => {} }).then(
        async (envs) => {
          await Promise.all(envs.map((e) => e.runtime.close()));
          return null;
        },
        (e: unknown) => e,
      );
      return err instanceof Error ? `${(err as { code?: string }).code}: ${err.message}` : "accepted";
    };
    const splits = "(its splits: train, test, train-two-digit, test-two-digit)";
    expect(await refusal((c) => ((c.eval.every = 5), (c.eval.split = "tset")))).toBe(
      `AJ_ERR_TRAIN_ENVIRONMENT: environment 'arith' could not be installed or opened: eval.split 'tset' is not a split of this environment ${splits}`,
    );
    // evaluation off: its split is never read
    expect(await refusal((c) => ((c.eval.every = 0), (c.eval.split = "tset")))).toBe("accepted");
    // an environment's own evaluation split overrides eval.split, and is checked in its place
    expect(await refusal((c) => ((c.eval.every = 5), (c.eval.split = "tset"), (c.environments[0]!.evalSplit = "test-two-digit")))).toBe("accepted");
    expect(await refusal((c) => ((c.eval.every = 5), (c.environments[0]!.evalSplit = "dev")))).toContain(`evalSplit 'dev' is not a split of this environment ${splits}`);
    expect(await refusal((c) => (c.environments[0]!.split = "trian"))).toContain(`split (training tasks) 'trian' is not a split of this environment ${splits}`);
    expect(await refusal((c) => (c.warmStart = { ...WarmStartSchema.parse({ steps: 10 }), split: "nope" }))).toContain(`warmStart.split 'nope' is not a split`);
  });
});

describeDocker("prepareEnvironments with a docker environment installed with --image, --mount and --data", () => {
  it("runs it as installed when the config gives no options, and keeps the image and mounts when the config's options reinstall it", { timeout: 180_000 }, async () => {
    const image = await buildAppWorldImage({ variant: "stand-in" });
    const project = tempDir("prepare-appworld");
    await addEnvironment({ name: "appworld", projectDir: project, image, data: FIXTURE_DATA, mounts: { data: FIXTURE_DATA }, smoke: false });
    const config = await smallQuickstart({ steps: 1, checkpointEvery: 100, batchTasks: 2, groupSize: 2, concurrency: 1 });
    const prepare = async (options: Record<string, unknown>): Promise<string> => {
      config.environments = [{ ...config.environments[0]!, name: "appworld", split: "train", roles: { solver: "main" }, options }];
      const lines: string[] = [];
      const envs = await prepareEnvironments(config, { projectDir: project, maxInstances: 1, log: (l) => lines.push(l) });
      try {
        // The instance starts: the image is the stand-in and the data is mounted (without it the entry exits at start).
        const opened = await envs[0]!.runtime.openEpisode();
        expect(opened.kind, JSON.stringify(opened)).toBe("ok");
        if (opened.kind === "ok") await opened.value.close();
      } finally {
        await Promise.all(envs.map((e) => e.runtime.close()));
      }
      return lines.join("\n");
    };

    // The documented flow (`env add appworld --data ... --mount ...`, then a config that names appworld).
    expect(await prepare({})).not.toContain("reinstalling");
    expect(readLockfile(project).environments["appworld"]?.options).toEqual({ data: FIXTURE_DATA });

    // Options of its own in the config reinstall it, with the user's image and mounts kept.
    expect(await prepare({ data: FIXTURE_DATA, reward: "partial" })).toContain("reinstalling with the config's options");
    expect(readLockfile(project).environments["appworld"]).toMatchObject({
      image,
      imageProvided: true,
      mounts: { data: FIXTURE_DATA },
      options: { data: FIXTURE_DATA, reward: "partial" },
    });
  });
});
