import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EnvironmentRuntime, openEnvironment } from "../../plugins/index.ts";
import type { Task } from "../../sdk/env/protocol.ts";
import { openOk, playClean } from "./fault-suite.ts";
import { loadFixture } from "./fixture-manifest.ts";

const faulty = loadFixture("vm-faulty");
const task = (data: unknown = {}): Task => ({ id: "t", split: "train", data });

/** Episodes sharing instances (`episodesPerInstance`): their calls travel as one batch per instance. */
describe("shared instances (episodesPerInstance)", () => {
  let rt: EnvironmentRuntime;
  beforeAll(async () => {
    rt = await openEnvironment({ ...faulty, warm: 0, maxInstances: 8, episodesPerInstance: 4 });
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("runs episodes at once on one instance, each with its own state", async () => {
    const shared = task();
    const sessions = await Promise.all(Array.from({ length: 8 }, () => openOk(rt)));
    const resets = await Promise.all(sessions.map((s, i) => s.reset({ task: shared, seed: i, builtinAgents: [] })));
    expect(resets.every((r) => r.kind === "ok")).toBe(true);
    // A wrong answer first in half of them: a shared game would count the turns of all.
    await Promise.all(sessions.filter((_, i) => i % 2 === 0).map((s) => s.step({ actions: { solver: "no" } })));
    const ends = await Promise.all(sessions.map((s) => s.step({ actions: { solver: "hi" } })));
    expect(ends.map((e) => (e.kind === "ok" ? e.value.info?.turns : e.failure.message))).toEqual([2, 1, 2, 1, 2, 1, 2, 1]);
    expect(ends.every((e) => e.kind === "ok" && e.value.rewards?.solver === 1)).toBe(true);
    await Promise.all(sessions.map((s) => s.close()));
  });

  it("a plugin throw fails its own episode only; the others on the instance carry on", async () => {
    const before = rt.stats().failures.crash;
    const [a, b, c] = await Promise.all([openOk(rt), openOk(rt), openOk(rt)]);
    const [ra, rb, rc] = await Promise.all([
      a!.reset({ task: task(), seed: 1, builtinAgents: [] }),
      b!.reset({ task: task({ fault: "throw" }), seed: 1, builtinAgents: [] }),
      c!.reset({ task: task(), seed: 1, builtinAgents: [] }),
    ]);
    expect([ra!.kind, rb!.kind, rc!.kind]).toEqual(["ok", "failed", "ok"]);
    expect(rb).toMatchObject({ failure: { kind: "crash" } });
    const [sa, sc] = await Promise.all([a!.step({ actions: { solver: "hi" } }), c!.step({ actions: { solver: "hi" } })]);
    expect(sa).toMatchObject({ kind: "ok", value: { done: true } });
    expect(sc).toMatchObject({ kind: "ok", value: { done: true } });
    await Promise.all([a!.close(), b!.close(), c!.close()]);
    expect(rt.stats().failures.crash).toBe(before + 1);
  });

  it("a timeout ends the episodes whose calls shared its batch; the next episode succeeds on a new instance", async () => {
    const [a, b] = await Promise.all([openOk(rt), openOk(rt)]);
    const [ra, rb] = await Promise.all([
      a!.reset({ task: task(), seed: 1, builtinAgents: [] }),
      b!.reset({ task: task({ fault: "loop" }), seed: 1, builtinAgents: [] }),
    ]);
    expect(rb).toMatchObject({ kind: "failed", failure: { kind: "timeout" } });
    // A bystander whose call shared the batch shares the instance's fate (documented); one sent before it did not.
    expect(ra!.kind === "ok" || ra!.failure.kind === "timeout").toBe(true);
    await Promise.all([a!.close(), b!.close()]);
    expect(await playClean(rt)).toBe(1);
  });

  it("generates tasks and solves through a shared instance", async () => {
    expect(await rt.listTasks("gen", { seed: 1 })).toHaveLength(5);
    expect(await rt.solve({ task: task(), agent: "solver", messages: [] })).toEqual({ kind: "ok", value: "hi" });
  });
});
