import { afterAll, beforeAll, expect, it } from "vitest";
import type { EnvironmentRuntime, EpisodeSession, FailureKind } from "../../plugins/index.ts";
import type { Task } from "../../sdk/env/protocol.ts";

const task = (data: unknown): Task => ({ id: "t", split: "train", data });

export async function openOk(runtime: EnvironmentRuntime): Promise<EpisodeSession> {
  const s = await runtime.openEpisode();
  if (s.kind !== "ok") throw new Error(`openEpisode failed: ${s.failure.kind}: ${s.failure.message}`);
  return s.value;
}

/** Polls `check` until it holds (or fails the test after `timeoutMs`). */
export async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Plays one clean episode to the end and returns the solver's reward. */
export async function playClean(runtime: EnvironmentRuntime): Promise<number | undefined> {
  const s = await openOk(runtime);
  const r = await s.reset({ task: task({}), seed: 1, builtinAgents: [] });
  expect(r.kind).toBe("ok");
  const st = await s.step({ actions: { solver: "hi" } });
  await s.close();
  if (st.kind !== "ok") throw new Error(`step failed: ${st.failure.kind}: ${st.failure.message}`);
  expect(st.value.done).toBe(true);
  return st.value.rewards?.solver;
}

/** The faults the vm-faulty and docker-faulty fixtures inject, and the failure kind each must end in. */
const FAULTS: Record<string, FailureKind> = {
  throw: "crash",
  loop: "timeout",
  hang: "timeout",
  memory: "oom",
  exit: "crash",
  garbage: "protocol",
  // Regression (issue 18, items 3 and 4): a reward outside the manifest's [0, 1] and a finished
  // episode without rewards were accepted as results.
  "out-of-range": "protocol",
  "no-rewards": "protocol",
  // A turn that goes on but asks no one (the agent loop spun to maxTurns and scored it as a truncated
  // episode at the bottom of the range), and one that asks an agent the episode does not seat.
  "asks-no-one": "protocol",
  "asks-a-stranger": "protocol",
};

/**
 * The fault-injection cases shared by both drivers: each fault fails only its own episode with the
 * right kind; a bystander episode on another instance carries on; the next episode succeeds.
 */
export function defineFaultCases(open: () => Promise<EnvironmentRuntime>): void {
  let runtime: EnvironmentRuntime;
  beforeAll(async () => {
    runtime = await open();
  });
  afterAll(async () => {
    await runtime?.close();
  });

  for (const [fault, kind] of Object.entries(FAULTS)) {
    it(`reset fault "${fault}" fails its own episode as ${kind}, and only that one`, async () => {
      const before = runtime.stats().failures[kind];
      const bystander = await openOk(runtime);
      expect((await bystander.reset({ task: task({}), seed: 1, builtinAgents: [] })).kind).toBe("ok");

      const victim = await openOk(runtime);
      const r = await victim.reset({ task: task({ fault }), seed: 1, builtinAgents: [] });
      expect(r).toMatchObject({ kind: "failed", failure: { kind } });
      const again = await victim.step({ actions: { solver: "hi" } });
      expect(again).toMatchObject({ kind: "failed", failure: { kind } });
      await victim.close();

      const st = await bystander.step({ actions: { solver: "hi" } });
      expect(st).toMatchObject({ kind: "ok", value: { done: true, rewards: { solver: 1 } } });
      await bystander.close();

      expect(await playClean(runtime)).toBe(1);
      expect(runtime.stats().failures[kind]).toBe(before + 1);
    });
  }

  it("a fault during step fails that episode and the next one succeeds", async () => {
    const s = await openOk(runtime);
    expect((await s.reset({ task: task({}), seed: 1, builtinAgents: [] })).kind).toBe("ok");
    expect(await s.step({ actions: { solver: "fault:throw" } })).toMatchObject({ kind: "failed", failure: { kind: "crash" } });
    await s.close();
    expect(await playClean(runtime)).toBe(1);
  });
}
