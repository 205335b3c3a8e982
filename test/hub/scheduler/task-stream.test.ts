import { describe, expect, it } from "vitest";
import { TaskStream } from "../../../hub/scheduler/index.ts";

const tasks = Array.from({ length: 7 }, (_, i) => ({ id: `t${i}`, split: "train", data: i }));

describe("TaskStream", () => {
  it("draws every task once per epoch before any repeats, in a seeded order", () => {
    const s = new TaskStream(tasks, 1, "env");
    const first = Array.from({ length: 7 }, () => s.next().id);
    const second = Array.from({ length: 7 }, () => s.next().id);
    expect(new Set(first).size).toBe(7);
    expect(new Set(second).size).toBe(7);
    expect(first).not.toEqual(second);
    expect(s.position()).toEqual({ epoch: 1, position: 7 });
    const again = new TaskStream(tasks, 1, "env");
    expect(Array.from({ length: 7 }, () => again.next().id)).toEqual(first);
    const other = new TaskStream(tasks, 2, "env");
    expect(Array.from({ length: 7 }, () => other.next().id)).not.toEqual(first);
  });

  it("resumes from a saved position with the same order", () => {
    const s = new TaskStream(tasks, 3, "env");
    for (let i = 0; i < 10; i++) s.next();
    const saved = s.position();
    const rest = Array.from({ length: 9 }, () => s.next().id);
    const resumed = new TaskStream(tasks, 3, "env", saved);
    expect(Array.from({ length: 9 }, () => resumed.next().id)).toEqual(rest);
  });
});
