import type { Outcome } from "../../plugins/index.ts";
import type { Task, Turn } from "../env/protocol.ts";
import type { AgentAccess, Assignment, SwarmAbortReason } from "./protocol.ts";

/** The environment of one episode, running in its sandbox. `reset` opens the instance on first use. */
export interface EnvHandle {
  readonly name: string;
  readonly version: string;
  /** The manifest's reward range (a truncated episode scores its minimum). */
  readonly reward: { min: number; max: number };
  /** Resets with the episode's task, seed and builtin agents. */
  reset(): Promise<Outcome<Turn>>;
  step(actions: Record<string, string>): Promise<Outcome<Turn>>;
}

/** What a workflow gets for one episode. */
export interface EpisodeHandle {
  readonly episodeId: string;
  readonly task: Task;
  readonly seed: number;
  readonly purpose: Assignment["purpose"];
  readonly attempt: number;
  readonly maxTurns: number;
  /** Per agent the workflow drives: `baseUrl` + `apiKey` for any OpenAI-compatible client, and `model`. */
  readonly agents: Readonly<Record<string, AgentAccess>>;
  readonly builtinAgents: readonly string[];
  readonly env: EnvHandle;
  /** Aborted when the scheduler cancels the episode (lease lost, group failed) or the client stops. */
  readonly signal: AbortSignal;
  /** Reports the rewards (per agent); the episode is over. */
  end(rewards: Record<string, number>, info?: Record<string, unknown>): void;
  /** Reports an infrastructure failure: the episode is retried elsewhere, never scored. */
  abort(reason: SwarmAbortReason): void;
  /** Tells the server this client agrees to a weight sync (batching strategies any-client / all-clients). */
  agreeSync(): void;
}

/** A user's agent loop for one episode. It must call `end` or `abort`; returning without either aborts. */
export type Workflow = (episode: EpisodeHandle) => Promise<void> | void;

/** Identity helper: `export const workflow = defineWorkflow(async (episode) => { ... })`. */
export function defineWorkflow(workflow: Workflow): Workflow {
  return workflow;
}
