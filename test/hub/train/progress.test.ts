import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../hub/train/events.ts";
import { createProgress, type FillStatus, formatEval, type ProgressMode } from "../../../hub/train/progress.ts";

const step: RunEvent = {
  type: "step",
  time: "2026-01-01T00:00:00.000Z",
  step: 3,
  version: 3,
  durationMs: 1500,
  episodesPerS: 42,
  perEnv: { arith: { episodes: 128, meanReward: 0.25, success: 0.125 } },
  perPolicy: { main: { samples: 128, meanReward: 0.25, loss: 0.1, tokens: 900, gradNorm: 0.5, trainMs: 300 } },
  filteredGroups: 2,
  failures: { timeout: 1 },
  merging: { callTokens: 1000, sampleTokens: 400 },
};
const fill: FillStatus = { step: 4, steps: 10, version: 3, phase: "collecting", perEnv: { arith: { done: 40, target: 128, meanReward: 0.2, success: 0.05 } }, failures: { crash: 2 }, episodesPerS: 42, etaS: 12 };

function capture(mode: ProgressMode, columns = 200): { text: () => string; sink: ReturnType<typeof createProgress> } {
  let written = "";
  const out = { columns, write: (s: string) => ((written += s), true) } as unknown as NodeJS.WriteStream;
  return { text: () => written, sink: createProgress(mode, 10, out) };
}

describe("train progress output", () => {
  it("on a terminal: a live status line, cleared before each event line and at the end", () => {
    const { text, sink } = capture("tty", 200);
    sink.fill(fill);
    sink.event(step);
    sink.fill(fill);
    sink.close();
    const out = text();
    expect(out).toContain("\r\x1b[2K[collecting] step 4/10 v3 arith 40/128 r=0.20 ok=5% failures crash:2 42.0 ep/s eta 12s");
    expect(out).toContain("\r\x1b[2Kstep 3/10 v3  arith r=0.250 ok=13% n=128  filtered 2  failures timeout:1  42.0 ep/s merge 0.40x  1.5s\n");
    expect(out.endsWith("\r\x1b[2K")).toBe(true);
  });

  it("cuts the status line to the terminal width, and assumes 100 columns where the terminal says 0", () => {
    for (const [columns, limit] of [[40, 40], [0, 100]] as const) {
      const { text, sink } = capture("tty", columns);
      sink.fill({ ...fill, perEnv: { aime: fill.perEnv.arith!, countdown: fill.perEnv.arith!, werewolves: fill.perEnv.arith! } });
      const status = text().replace("\r\x1b[2K", "");
      expect(status.length).toBeGreaterThan(20);
      expect(status.length).toBeLessThan(limit);
    }
  });

  it("elsewhere: plain lines only, no status line", () => {
    const { text, sink } = capture("plain");
    sink.fill(fill);
    sink.event(step);
    sink.close();
    expect(text()).toBe("step 3/10 v3  arith r=0.250 ok=13% n=128  filtered 2  failures timeout:1  42.0 ep/s merge 0.40x  1.5s\n");
  });

  it("--json: each event as one JSON line", () => {
    const { text, sink } = capture("json");
    sink.fill(fill);
    sink.event(step);
    sink.event({ type: "end", time: "2026-01-01T00:00:01.000Z", reason: "done", step: 3 });
    const lines = text().trim().split("\n");
    expect(lines.map((l) => JSON.parse(l))).toEqual([step, { type: "end", time: "2026-01-01T00:00:01.000Z", reason: "done", step: 3 }]);
  });

  it("an evaluation line says how many of its episodes failed (not scored), when some did", () => {
    const e = { type: "eval", time: "2026-01-01T00:00:00.000Z", step: 2, env: "werewolves", split: "test", episodes: 3, meanReward: 1, success: 1, mode: "greedy", temperature: 0 } as const;
    expect(formatEval({ ...e, failed: 1 })).toBe("eval step 2: werewolves/test greedy success 100.0% (r=1.000 n=3, 1 failed)");
    expect(formatEval({ ...e, failed: 0 })).toBe("eval step 2: werewolves/test greedy success 100.0% (r=1.000 n=3)");
  });
});
