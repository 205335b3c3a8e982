import type { EnvironmentDefinition } from "../../../sdk/env/define-environment.ts";
import type { Task, Turn } from "../../../sdk/env/protocol.ts";

export type Message = { role: "system" | "user" | "assistant"; content: string };

/** Given an agent and its whole conversation so far (the newest observation last), its reply. */
export type Policy = (agent: string, conversation: Message[]) => string;

export interface Played {
  turns: Turn[];
  last: Turn;
  /** Each agent's conversation as it saw it (observations plus its own replies). */
  conversations: Record<string, Message[]>;
}

/** Runs one episode against the definition itself, in this process, with `policy` acting for every asked agent. */
export async function playInProcess(
  env: EnvironmentDefinition,
  task: Task,
  policy: Policy,
  opts: { seed?: number; builtinAgents?: string[]; maxSteps?: number } = {},
): Promise<Played> {
  const ep = env.createEpisode();
  const conversations: Played["conversations"] = {};
  let turn = await ep.reset({ task, seed: opts.seed ?? 1, builtinAgents: opts.builtinAgents ?? [] });
  const turns = [turn];
  for (let i = 0; !turn.done && i < (opts.maxSteps ?? 50); i++) {
    const actions: Record<string, string> = {};
    for (const [agent, obs] of Object.entries(turn.observations)) {
      const convo = (conversations[agent] ??= []);
      convo.push(...obs.messages);
      const reply = policy(agent, [...convo]);
      convo.push({ role: "assistant", content: reply });
      actions[agent] = reply;
    }
    turn = await ep.step({ actions });
    turns.push(turn);
  }
  return { turns, last: turn, conversations };
}

/** The definition's reference agent as a policy for `task`. */
export function solverPolicy(env: EnvironmentDefinition, task: Task): Policy {
  return (agent, conversation) => env.solve!({ task, agent, messages: conversation });
}
