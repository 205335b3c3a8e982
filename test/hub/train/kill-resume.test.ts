import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRng } from "../../../hub/scheduler/rng.ts";
import { runTraining } from "../../../hub/train/run-training.ts";
import { loadRunConfig } from "../../../server/config/load-run-config.ts";
import { removeTempDirs, runCli, tempDir } from "../helpers.ts";
import { slotOf, trainedLedger, weightsHash } from "./determinism.ts";
import { quiet, readEvents, tinyArithYaml } from "./helpers.ts";

afterAll(removeTempDirs);

const STEPS = 4;
const BATCH_EPISODES = 3 * 3;
// No `deterministic` here: the first start passes --deterministic, and --resume reads it from the run's config.yaml.
const CONFIG = tinyArithYaml({
  run: `{ dir: run, seed: 11, steps: ${STEPS}, checkpointEvery: 2 }`,
  modelSeed: 2,
  lr: 0.003,
  batchTasks: 3,
  groupSize: 3,
  rest: "clients: { local: 1, concurrency: 4 }\n",
});

/** Where a kill -9 lands: `after` events of `type` have been printed (a step, an episode's end), then `delayMs`. */
interface KillPoint {
  type: "step" | "episode-end";
  after: number;
  delayMs: number;
}

/** `agentjet train ... --json`, killed with SIGKILL at `kill` (if it gets there); resolves when it exited. */
async function trainUntil(args: string[], cwd: string, kill: KillPoint | null): Promise<{ killed: boolean; code: number; stderr: string }> {
  let seen = 0;
  let parsed = 0;
  let armed = kill !== null;
  let killed = false;
  const r = await runCli(["train", ...args, "--json", "--port", "0", "--no-report"], cwd, (stdout: string, child: ChildProcess) => {
    if (!armed || kill === null) return;
    const lines = stdout.split("\n");
    for (; parsed < lines.length - 1; parsed++) {
      if (lines[parsed]!.startsWith(`{"type":"${kill.type}"`)) seen++;
    }
    if (seen >= kill.after) {
      armed = false;
      setTimeout(() => {
        killed = child.exitCode === null && child.kill("SIGKILL");
      }, kill.delayMs);
    }
  });
  return { killed, code: r.code, stderr: r.stderr };
}

// Issue 18, item 5 and "done when": kill the training process (a real SIGKILL of the CLI) at random
// points; after --resume, the final weights' lineage trained every finished group exactly once and
// nothing else, metrics.jsonl holds one event per step, and the weights equal an uninterrupted run's.
describe("agentjet train --deterministic: kill -9 at random points, then --resume", () => {
  it("ends with the uninterrupted run's weights and ledger, one step event per step", { timeout: 600_000 }, async () => {
    const project = tempDir("kill-resume");
    const configPath = join(project, "run.yaml");
    writeFileSync(configPath, CONFIG);
    const loaded = await loadRunConfig(configPath);
    if (loaded.kind !== "ok") throw new Error(JSON.stringify(loaded));
    const reference = join(project, "reference");
    const config = { ...loaded.config, run: { ...loaded.config.run, deterministic: true } };
    expect((await runTraining({ config, runDir: reference, projectDir: project, port: 0, progress: quiet, report: false })).reason).toBe("done");
    const want = { hash: weightsHash(reference), ledger: trainedLedger(reference).map((r) => ({ step: r.step, slot: slotOf(r.episodeId), groupId: r.groupId })) };
    expect(new Set(want.ledger.map((r) => r.step)).size).toBe(STEPS);

    // Seeded, so that a failure names kill points that reproduce it.
    const rng = createRng(18);
    const pick = (n: number): number => 1 + Math.floor(rng() * n);
    const scenarios: KillPoint[][] = [
      // Mid-batch: some episodes of a batch have ended, none trained.
      [{ type: "episode-end", after: pick(BATCH_EPISODES * STEPS - 1), delayMs: Math.floor(rng() * 50) }],
      // Right after a step event: the checkpoint of an even step is being written; then the resumed run dies too.
      [
        { type: "step", after: pick(STEPS - 1), delayMs: 0 },
        { type: "step", after: 1, delayMs: Math.floor(rng() * 100) },
      ],
      // Anywhere up to well past a step (the last one's final checkpoint included).
      [{ type: "step", after: pick(STEPS), delayMs: Math.floor(rng() * 300) }],
    ];
    for (const [i, kills] of scenarios.entries()) {
      const runDir = join(project, `run-${i}`);
      const where = JSON.stringify(kills);
      const first = await trainUntil([configPath, "--deterministic", "--run-dir", runDir], project, kills[0]!);
      for (const kill of kills.slice(1)) await trainUntil(["--resume", runDir], project, kill);
      const last = await trainUntil(["--resume", runDir], project, null);
      expect(last.code, `${where}: ${last.stderr}`).toBe(0);
      // The last scenario may land after the run's end; the others kill it mid-run.
      if (i < scenarios.length - 1) expect(first.killed, where).toBe(true);
      else expect(first.killed || first.code === 0, where).toBe(true);

      const steps = readEvents(runDir).flatMap((e) => (e.type === "step" ? [e.step] : []));
      expect(steps, where).toEqual(Array.from({ length: STEPS }, (_, k) => k + 1));
      const ledger = trainedLedger(runDir);
      const byGroup = new Map<string, Set<number>>();
      for (const r of ledger) byGroup.set(r.groupId, (byGroup.get(r.groupId) ?? new Set()).add(r.step));
      for (const [g, s] of byGroup) expect(s.size, `${where}: group ${g} trained at steps ${[...s].join(", ")}`).toBe(1);
      expect(ledger.map((r) => ({ step: r.step, slot: slotOf(r.episodeId), groupId: r.groupId })), where).toEqual(want.ledger);
      expect(weightsHash(runDir), where).toBe(want.hash);
    }
  });
});
