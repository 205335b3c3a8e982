import type Docker from "dockerode";
import type { Failure } from "../runtime.ts";
import { dockerClient } from "./docker-client.ts";

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
    if (await killedForMemory(container.id, info.State)) return { kind: "oom", message: `killed for exceeding its memory limit (exit ${code})` };
  } catch {
    // Removed before it could be inspected: reported as an exit.
  }
  return { kind: "crash", message: `the container exited with code ${code}` };
}

/** A container's exit code when its process was killed by SIGKILL: the kernel's OOM killer, or `docker kill`. */
const SIGKILL_EXIT = 137;

/**
 * How long an exit by SIGKILL that the engine did not mark `OOMKilled` waits for its `oom` event. Under
 * gVisor on a loaded machine the event came 70-80 ms after the exit (`die`), too late for the flag: 7 of
 * 60 OOM kills here.
 */
const OOM_EVENT_WAIT_MS = 500;

/**
 * Whether the kernel killed a stopped container for memory, as the engine tells it: the `OOMKilled` flag,
 * or, for an exit by SIGKILL without it, the container's `oom` event (which can trail the exit).
 */
export async function killedForMemory(id: string, state: { OOMKilled: boolean; ExitCode: number; StartedAt: string }): Promise<boolean> {
  if (state.OOMKilled) return true;
  return state.ExitCode === SIGKILL_EXIT && oomEventSince(id, state.StartedAt, OOM_EVENT_WAIT_MS);
}

/** Whether the engine reports an `oom` event for the container since `startedAt`, waiting up to `withinMs` for one still to come. */
export async function oomEventSince(id: string, startedAt: string, withinMs: number): Promise<boolean> {
  const since = Math.floor(Date.parse(startedAt) / 1000) - 1;
  if (!Number.isFinite(since)) return false;
  let events: NodeJS.ReadableStream & { destroy?: () => void };
  try {
    events = await dockerClient().getEvents({ since, filters: { container: [id], event: ["oom"] } });
  } catch {
    return false;
  }
  return new Promise<boolean>((resolve) => {
    const end = (seen: boolean): void => {
      clearTimeout(timer);
      events.removeAllListeners("data");
      events.destroy?.();
      resolve(seen);
    };
    const timer = setTimeout(() => end(false), withinMs);
    // the filters leave only this container's oom events: any data is one
    events.on("data", () => end(true));
    events.on("error", () => end(false));
    events.on("end", () => end(false));
  });
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
