import type Docker from "dockerode";
import { failed, ok } from "../outcome.ts";
import type { Outcome } from "../runtime.ts";

/**
 * Asks the engine whether the container still runs. A `docker kill` reaches the channel only when the
 * engine's wait returns, which can be after the supervisor's next handout; the engine knows at once.
 */
export async function probeContainer(container: Docker.Container): Promise<Outcome<void>> {
  try {
    const info = await container.inspect();
    if (info.State.OOMKilled) return failed("oom", "the idle container was killed for exceeding its memory limit");
    if (!info.State.Running) return failed("crash", `the idle container is not running (${info.State.Status}, exit ${info.State.ExitCode})`);
    return ok(undefined);
  } catch (err) {
    return failed("crash", `the idle container went away: ${err instanceof Error ? err.message : String(err)}`);
  }
}
