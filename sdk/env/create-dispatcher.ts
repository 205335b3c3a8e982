import type { EnvironmentDefinition, EpisodeDynamics } from "./define-environment.ts";
import type { HostRequest, InstanceReply } from "./protocol.ts";

/**
 * The instance side of the protocol, shared by both sandboxes: turns one host request into one reply.
 * Holds the current episode's dynamics; `reset` always starts a fresh episode. Free of Node APIs and of
 * zod so that it runs inside an isolate; hosts validate what comes back.
 */
export function createDispatcher(environment: EnvironmentDefinition): (request: HostRequest) => Promise<InstanceReply> {
  let episode: EpisodeDynamics | undefined;

  async function run(request: HostRequest): Promise<unknown> {
    switch (request.op) {
      case "ping":
        return "pong";
      case "reset":
        if (episode) await episode.close?.();
        episode = environment.createEpisode();
        return await episode.reset(request.params);
      case "step":
        if (!episode) throw new Error("step before reset");
        return await episode.step(request.params);
      case "close": {
        const current = episode;
        episode = undefined;
        await current?.close?.();
        return null;
      }
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
      const e = err instanceof Error ? err : new Error(String(err));
      return { id: request.id, ok: false, error: e.stack ? { message: e.message, stack: e.stack } : { message: e.message } };
    }
  };
}
