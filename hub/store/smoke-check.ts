import type { Manifest, Task } from "../../sdk/env/index.ts";
import { type EnvironmentRuntime, openEnvironment, type OpenEnvironmentOptions } from "../../plugins/index.ts";

export type SmokeResult = { kind: "ok"; task: string; steps: number } | { kind: "skipped"; reason: string } | { kind: "failed"; message: string };

async function firstTask(runtime: EnvironmentRuntime, manifest: Manifest): Promise<Task | undefined> {
  for (const [split, spec] of Object.entries(manifest.splits)) {
    if ("external" in spec) continue;
    const tasks = await runtime.listTasks(split, { seed: 0 });
    if (tasks[0]) return tasks[0];
  }
  return undefined;
}

/** Opens the environment, resets one task and steps it once (with the reference action when it has one). */
export async function runSmokeCheck(opts: Omit<OpenEnvironmentOptions, "maxInstances" | "warm">): Promise<SmokeResult> {
  let runtime: EnvironmentRuntime | undefined;
  try {
    // Two instances: the reference solve runs on one while the episode holds the other.
    runtime = await openEnvironment({ ...opts, maxInstances: 2, warm: 1 });
    const task = await firstTask(runtime, opts.manifest);
    if (!task) return { kind: "skipped", reason: "no tasks without user data (only external splits)" };
    const opened = await runtime.openEpisode();
    if (opened.kind === "failed") return { kind: "failed", message: `open: ${opened.failure.kind}: ${opened.failure.message}` };
    const session = opened.value;
    try {
      const reset = await session.reset({ task, seed: 0, builtinAgents: [] });
      if (reset.kind === "failed") return { kind: "failed", message: `reset: ${reset.failure.kind}: ${reset.failure.message}` };
      if (reset.value.done) return { kind: "ok", task: task.id, steps: 0 };
      const actions: Record<string, string> = {};
      for (const agent of Object.keys(reset.value.observations)) {
        const solved = await runtime.solve({ task, agent, messages: reset.value.observations[agent]?.messages ?? [] });
        actions[agent] = solved.kind === "ok" ? solved.value : "";
      }
      const step = await session.step({ actions });
      if (step.kind === "failed") return { kind: "failed", message: `step: ${step.failure.kind}: ${step.failure.message}` };
      return { kind: "ok", task: task.id, steps: 1 };
    } finally {
      await session.close();
    }
  } catch (cause) {
    return { kind: "failed", message: (cause as Error).message };
  } finally {
    await runtime?.close();
  }
}
