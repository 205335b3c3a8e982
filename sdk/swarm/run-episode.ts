import type { EnvironmentRuntime, EpisodeSession, Outcome } from "../../plugins/index.ts";
import type { Turn } from "../env/protocol.ts";
import type { Assignment, ClientMessage, SwarmAbortReason } from "./protocol.ts";
import type { EnvHandle, EpisodeHandle, Workflow } from "./workflow.ts";

export type EpisodeResultMessage = Extract<ClientMessage, { type: "end" } | { type: "abort" }>;

/**
 * Runs one assigned episode with a workflow and returns the frame to report: `end` with rewards, or
 * `abort` with an infrastructure failure. The environment instance is opened on the first `reset` and
 * always handed back at the end.
 */
export async function runEpisode(input: {
  assignment: Assignment;
  runtime: EnvironmentRuntime;
  signal: AbortSignal;
  workflow: () => Workflow | Promise<Workflow>;
  agreeSync: () => void;
}): Promise<EpisodeResultMessage> {
  const { assignment, runtime, signal } = input;
  const episodeId = assignment.episodeId;
  let result: EpisodeResultMessage | null = null;
  let session: EpisodeSession | null = null;

  const settle = (r: EpisodeResultMessage) => {
    if (!result) result = r;
  };
  const withSession = async (use: (s: EpisodeSession) => Promise<Outcome<Turn>>): Promise<Outcome<Turn>> => {
    if (!session) {
      const opened = await runtime.openEpisode();
      if (opened.kind === "failed") return opened;
      session = opened.value;
    }
    return use(session);
  };

  const env: EnvHandle = {
    name: runtime.manifest.name,
    version: runtime.manifest.version,
    reward: runtime.manifest.reward,
    reset: () =>
      withSession((s) => s.reset({ task: assignment.task, seed: assignment.seed, builtinAgents: assignment.builtinAgents })),
    step: (actions) => withSession((s) => s.step({ actions })),
  };
  const handle: EpisodeHandle = {
    episodeId,
    task: assignment.task,
    seed: assignment.seed,
    purpose: assignment.purpose,
    attempt: assignment.attempt,
    maxTurns: assignment.maxTurns,
    agents: assignment.agents,
    builtinAgents: assignment.builtinAgents,
    env,
    signal,
    end: (rewards, info = {}) => settle({ type: "end", episodeId, rewards, info }),
    abort: (reason: SwarmAbortReason) => settle({ type: "abort", episodeId, reason }),
    agreeSync: input.agreeSync,
  };

  try {
    const workflow = await input.workflow();
    await workflow(handle);
  } catch (err) {
    // A chat call refused because the server had already closed the episode (cancelled, run stopped), or
    // cut by the scheduler's cancel (the episode's signal), is not the workflow's fault: the server's own
    // reason stands, and this one only says what the client saw.
    const kind = closedByServer(err) || signal.aborted ? "cancelled" : "workflow";
    settle({ type: "abort", episodeId, reason: { kind, message: errorMessage(err) } });
  } finally {
    const open: EpisodeSession | null = session;
    if (open) await (open as EpisodeSession).close();
  }
  return (
    result ?? { type: "abort", episodeId, reason: { kind: "workflow", message: "the workflow returned without end() or abort()" } }
  );
}

/** The server's answers that mean it closed the episode itself: the episode is closed (409), or the engine is stopping (503). */
const CLOSED_BY_SERVER: ReadonlyArray<[number, string]> = [
  [409, "AJ_ERR_EPISODE_CLOSED"],
  [503, "AJ_ERR_ENGINE_OFFLINE"],
];

/** A chat call's failure on one of `CLOSED_BY_SERVER`: as our client raises it, or as an OpenAI SDK raises it (`status` and the error body's `code`). */
function closedByServer(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { status?: unknown; code?: unknown; message?: unknown };
  return CLOSED_BY_SERVER.some(([status, code]) => e.status === status && (e.code === code || (typeof e.message === "string" && e.message.includes(code))));
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
