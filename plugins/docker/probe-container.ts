import type Docker from "dockerode";
import { failed } from "../outcome.ts";
import type { Outcome } from "../runtime.ts";
import { killedForMemory } from "./container-exit.ts";

/**
 * A channel's probe of its idle container: first asks the engine whether the container still runs (a
 * `docker kill` reaches the channel only when the engine's wait returns, which can be after the
 * supervisor's next handout; the engine knows at once), calling `onGone` when it does not; then `ping`s it.
 */
export async function probeContainer(container: Docker.Container, ping: () => Promise<Outcome<unknown>>, onGone: () => void): Promise<Outcome<unknown>> {
  const gone = await whyGone(container);
  if (gone !== null) {
    onGone();
    return gone;
  }
  return ping();
}

async function whyGone(container: Docker.Container): Promise<Outcome<never> | null> {
  try {
    const info = await container.inspect();
    if (info.State.Running && !info.State.OOMKilled) return null;
    if (await killedForMemory(info.Id, info.State)) return failed("oom", "the idle container was killed for exceeding its memory limit");
    return failed("crash", `the idle container is not running (${info.State.Status}, exit ${info.State.ExitCode})`);
  } catch (err) {
    return failed("crash", `the idle container went away: ${err instanceof Error ? err.message : String(err)}`);
  }
}
