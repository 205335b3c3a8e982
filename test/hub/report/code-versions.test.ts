import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildReport } from "../../../hub/report/build-report.ts";
import type { RunEvent } from "../../../hub/train/events.ts";

const V1 = "a1".repeat(32);
const V2 = "b2".repeat(32);

function episode(step: number, reward: number, hash: string | null, purpose: "train" | "eval" = "train"): RunEvent {
  return {
    type: "episode-end",
    time: "t",
    step,
    env: "my-env",
    taskId: "t1",
    purpose,
    episodeId: `e${step}-${reward}-${hash}`,
    clientId: "c",
    attempt: 0,
    reward,
    ...(hash ? { code: { hash, dev: true } } : {}),
  };
}

describe("the report splits rewards by code version", () => {
  it("one row per (environment, code hash), training episodes only, in the order the versions ran", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-report-code-"));
    const events: RunEvent[] = [
      { type: "start", time: "t", runDir: dir, steps: 2, policies: ["main"], environments: ["my-env"] },
      episode(0, 1, V1),
      episode(0, 0, V1),
      episode(1, 0.5, V2),
      episode(1, 0.5, V2),
      episode(1, 0, V2, "eval"),
      episode(1, 1, null),
      { type: "end", time: "t", reason: "done", step: 2 },
    ];
    writeFileSync(join(dir, "metrics.jsonl"), `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
    const summary = await buildReport(dir);
    expect(summary.codeVersions).toEqual([
      { env: "my-env", hash: V1, dev: true, episodes: 2, meanReward: 0.5, firstStep: 0, lastStep: 0 },
      { env: "my-env", hash: V2, dev: true, episodes: 2, meanReward: 0.5, firstStep: 1, lastStep: 1 },
      { env: "my-env", hash: "unknown", dev: false, episodes: 1, meanReward: 1, firstStep: 1, lastStep: 1 },
    ]);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("Reward by code version");
    expect(html).toContain(V2.slice(0, 12));
  });
});
