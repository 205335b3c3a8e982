import type Docker from "dockerode";
import type { Failure } from "../runtime.ts";

/**
 * Resolves when the container stops, with why: killed by the kernel for memory (`oom`) or exited
 * (`crash`). Safe to call before the container starts: it waits for the next exit.
 */
export async function watchExit(container: Docker.Container): Promise<Failure> {
  let code: unknown;
  try {
    const r = (await container.wait({ condition: "next-exit" })) as { StatusCode?: number };
    code = r.StatusCode;
  } catch {
    return { kind: "crash", message: "the container went away" };
  }
  try {
    const info = await container.inspect();
    if (info.State.OOMKilled) return { kind: "oom", message: `killed for exceeding its memory limit (exit ${code})` };
  } catch {
    // Removed before it could be inspected: reported as an exit.
  }
  return { kind: "crash", message: `the container exited with code ${code}` };
}

/**
 * Whether the kernel has already killed the container for memory (inspected, at most `withinMs`). A call
 * that timed out while the engine's exit report lagged (a loaded machine) is then an `oom`, not a `timeout`.
 */
export async function wasOomKilled(container: Docker.Container, withinMs = 1_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), withinMs)));
  try {
    return await Promise.race([container.inspect().then((info) => info.State.OOMKilled === true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
