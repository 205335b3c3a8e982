import { afterEach, describe, expect, it, vi } from "vitest";
import { createFailureLog } from "../../../hub/swarm/failure-log.ts";

afterEach(() => vi.useRealTimers());

describe("createFailureLog (what agentjet client says about the episodes it aborts)", () => {
  it("says each new reason once, with the episode, and sums repeats up every interval", () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const f = createFailureLog((l) => lines.push(l), { everyMs: 10_000 });
    f.failed("e1", "workflow", "boom");
    f.failed("e2", "workflow", "boom");
    f.failed("e3", "crash", "exited with code 1");
    f.failed("e4", "workflow", "boom");
    expect(lines).toEqual(["episode e1 aborted (workflow: boom); not scored", "episode e3 aborted (crash: exited with code 1); not scored"]);
    vi.advanceTimersByTime(10_000);
    expect(lines.at(-1)).toBe("2 more episodes aborted (2 workflow) in the last 10 s");
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(3);
    f.failed("e5", "crash", "exited with code 1");
    f.close();
    expect(lines.at(-1)).toBe("1 more episode aborted (1 crash) in the last 10 s");
  });

  it("leaves out the scheduler's cancellations and lost connections", () => {
    const lines: string[] = [];
    const f = createFailureLog((l) => lines.push(l));
    for (const kind of ["cancelled", "group-failed", "client-lost", "reclaimed"]) f.failed("e", kind, "x");
    f.close();
    expect(lines).toEqual([]);
  });

  it("past five distinct reasons (messages that name each episode) only counts", () => {
    const lines: string[] = [];
    const f = createFailureLog((l) => lines.push(l));
    for (let i = 0; i < 100; i++) f.failed(`e${i}`, "crash", `episode e${i} exploded`);
    f.close();
    expect(lines).toHaveLength(6);
    expect(lines[4]).toContain("(further new reasons are only counted)");
    expect(lines[5]).toBe("95 more episodes aborted (95 crash) in the last 10 s");
  });
});
