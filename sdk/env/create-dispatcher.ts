import type { EnvironmentDefinition, EpisodeDynamics } from "./define-environment.ts";
import type { BatchReply, BatchRequest, HostRequest, InstanceReply } from "./protocol.ts";

/** The episode key of the plain (unbatched) ops: an instance serving one episode at a time. */
const SOLE = "";

/**
 * The instance side of the protocol, shared by both sandboxes: turns one host request into one reply.
 * Holds the dynamics of each episode it serves, by key (plain ops use one key; a `batch` names each
 * call's); `reset` always starts a fresh episode under its key. Free of Node APIs and of zod so that it
 * runs inside an isolate; hosts validate what comes back.
 */
export function createDispatcher(environment: EnvironmentDefinition): (request: HostRequest) => Promise<InstanceReply> {
  const episodes = new Map<string, EpisodeDynamics>();

  async function runEpisodeOp(key: string, op: "reset" | "step" | "close" | "ping", params: unknown): Promise<unknown> {
    switch (op) {
      case "ping":
        return "pong";
      case "reset": {
        await episodes.get(key)?.close?.();
        const episode = environment.createEpisode();
        episodes.set(key, episode);
        return await episode.reset(params as never);
      }
      case "step": {
        const episode = episodes.get(key);
        if (!episode) throw new Error("step before reset");
        return await episode.step(params as never);
      }
      case "close": {
        const current = episodes.get(key);
        episodes.delete(key);
        await current?.close?.();
        return null;
      }
    }
  }

  function runBatch(batch: BatchRequest): Promise<BatchReply> {
    const tasks = batch.tasks ?? [];
    return Promise.all(
      batch.calls.map(async (call) => {
        try {
          const params = call.taskIndex === undefined ? call.params : { ...call.params, task: tasks[call.taskIndex] };
          return { ok: true as const, result: await runEpisodeOp(call.episode, call.op, params ?? {}) };
        } catch (err) {
          return { ok: false as const, error: errorOf(err) };
        }
      }),
    );
  }

  async function run(request: HostRequest): Promise<unknown> {
    switch (request.op) {
      case "ping":
      case "reset":
      case "step":
      case "close":
        return runEpisodeOp(SOLE, request.op, request.params);
      case "batch":
        return runBatch(request.params);
      case "tasks":
        if (!environment.generateTasks) throw new Error("this environment has no generateTasks");
        return environment.generateTasks(request.params);
      case "solve":
        if (!environment.solve) throw new Error("this environment has no solve");
        return environment.solve(request.params);
    }
  }

  return async (request) => {
    try {
      return { id: request.id, ok: true, result: await run(request) };
    } catch (err) {
      return { id: request.id, ok: false, error: errorOf(err) };
    }
  };
}

function errorOf(err: unknown): { message: string; stack?: string } {
  const e = err instanceof Error ? err : new Error(String(err));
  return e.stack ? { message: e.message, stack: e.stack } : { message: e.message };
}
