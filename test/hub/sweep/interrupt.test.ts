import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CampaignSchema } from "../../../hub/sweep/campaign.ts";
import { readLatestCheckpoint } from "../../../hub/train/checkpoint.ts";
import { REPO, removeTempDirs, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

// Runs far too long to end by themselves: the sweep only ends by the Ctrl-C.
const SWEEP = `name: int
search: grid
parameters:
  policies.main.optimizer.lr: [0.0003, 0.003, 0.01]
parallel: 2
config:
  run: { seed: 1, steps: 100000, checkpointEvery: 100000 }
  policies:
    main:
      engine: { kind: embedded, model: { layers: 1, dim: 16, heads: 2, context: 64, seed: 1 } }
  environments:
    - { name: arith, split: train, roles: { solver: main } }
  sampling: { temperature: 1, maxTokens: 3 }
  batching: { strategy: tasks, batchTasks: 2, groupSize: 2, filterEqualRewards: false }
  clients: { local: 1, concurrency: 4 }
`;

describe("agentjet sweep: Ctrl-C", () => {
  it("stops the running runs cleanly (they checkpoint and exit 130), marks them interrupted, starts nothing more and exits 130", { timeout: 180_000 }, async () => {
    const project = tempDir("sweep-int");
    writeFileSync(join(project, "sweep.yaml"), SWEEP);
    const camp = join(project, "camp");
    const child = spawn(process.execPath, [join(REPO, "bin", "agentjet.js"), "sweep", "sweep.yaml", "--campaign-dir", camp, "--json"], {
      cwd: project,
      env: { ...process.env, AGENTJET_CHILD: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const runDirs = ["01-lr=0.0003_s1", "02-lr=0.003_s1"].map((id) => join(camp, "runs", id));
    // Once both runs have trained a step (their Ctrl-C handlers are in place), press Ctrl-C.
    const end = Date.now() + 150_000;
    const stepped = (dir: string): boolean => existsSync(join(dir, "metrics.jsonl")) && readFileSync(join(dir, "metrics.jsonl"), "utf8").includes('"type":"step"');
    while (!runDirs.every(stepped)) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`the runs never stepped\n${stdout}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    child.kill("SIGINT");
    expect(await exited, stderr).toBe(130);

    const events = stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.filter((e) => e.event === "run-end")).toEqual([
      expect.objectContaining({ status: "interrupted", exitCode: 130 }),
      expect.objectContaining({ status: "interrupted", exitCode: 130 }),
    ]);
    expect(events.at(-1)).toMatchObject({ event: "sweep-end", reason: "interrupted" });
    const campaign = CampaignSchema.parse(JSON.parse(readFileSync(join(camp, "campaign.json"), "utf8")));
    expect(campaign.runs.map((r) => [r.status, r.exitCode])).toEqual([
      ["interrupted", 130],
      ["interrupted", 130],
      ["pending", null],
    ]);
    expect(campaign.ownerPid).toBeNull();
    for (const dir of runDirs) expect(readLatestCheckpoint(dir).kind, dir).toBe("ok");
  });
});
