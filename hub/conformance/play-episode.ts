import type { ResponseFormat, Task, Turn } from "../../sdk/env/index.ts";
import type { EnvironmentRuntime, Failure } from "../../plugins/index.ts";

/** `format`: the observation's `responseFormat`, the shape the reply must take (absent: free text). */
export type ActionPolicy = (
  agent: string,
  task: Task,
  history: Array<{ role: "system" | "user" | "assistant"; content: string }>,
  format?: ResponseFormat,
) => Promise<string>;

export type EpisodeResult =
  | { kind: "done"; turns: Turn[]; rewards: Record<string, number> }
  | { kind: "unfinished"; turns: Turn[] }
  | { kind: "failed"; turns: Turn[]; failure: Failure; during: "open" | "reset" | "step" };

/** Plays one episode to the end (or `maxSteps`), asking `act` for every agent whose turn it is. */
export async function playEpisode(opts: {
  runtime: EnvironmentRuntime;
  task: Task;
  seed: number;
  builtinAgents: string[];
  act: ActionPolicy;
  maxSteps: number;
}): Promise<EpisodeResult> {
  const turns: Turn[] = [];
  const opened = await opts.runtime.openEpisode();
  if (opened.kind === "failed") return { kind: "failed", turns, failure: opened.failure, during: "open" };
  const session = opened.value;
  const histories = new Map<string, Array<{ role: "system" | "user" | "assistant"; content: string }>>();
  try {
    let turn = await session.reset({ task: opts.task, seed: opts.seed, builtinAgents: opts.builtinAgents });
    if (turn.kind === "failed") return { kind: "failed", turns, failure: turn.failure, during: "reset" };
    turns.push(turn.value);
    for (let step = 0; step < opts.maxSteps && !turn.value.done; step++) {
      const actions: Record<string, string> = {};
      for (const [agent, obs] of Object.entries(turn.value.observations)) {
        const history = obs.fresh ? [] : (histories.get(agent) ?? []);
        history.push(...obs.messages);
        histories.set(agent, history);
        const action = await opts.act(agent, opts.task, history, obs.responseFormat);
        history.push({ role: "assistant", content: action });
        actions[agent] = action;
      }
      turn = await session.step({ actions });
      if (turn.kind === "failed") return { kind: "failed", turns, failure: turn.failure, during: "step" };
      turns.push(turn.value);
    }
    if (!turn.value.done) return { kind: "unfinished", turns };
    return { kind: "done", turns, rewards: turn.value.rewards ?? {} };
  } finally {
    await session.close();
  }
}
