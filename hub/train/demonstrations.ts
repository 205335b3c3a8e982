import { readFileSync } from "node:fs";
import { z } from "zod";
import type { RunConfig } from "../../server/config/index.ts";
import { promptIds, type Tokenizer } from "../../server/tokenizers/index.ts";
import type { Task } from "../../sdk/env/index.ts";
import { playEpisode } from "../conformance/play-episode.ts";
import { resolveSeats, seatsOf } from "../scheduler/resolve-seats.ts";
import { WarmStartError } from "./errors.ts";
import type { PreparedEnvironment } from "./prepare-environments.ts";
import { isSuccess } from "./step-stats.ts";

type Message = { role: "system" | "user" | "assistant"; content: string };

/** One supervised example: the conversation up to a reply, and the reply the policy should give. */
export interface Demonstration {
  policy: string;
  env: string;
  context: Message[];
  reply: string;
}

/** A demonstration as token ids, the loss mask on the reply and its end-of-turn token. */
export interface TokenizedDemo {
  tokenIds: number[];
  lossMask: number[];
}

export function tokenizeDemo(d: Demonstration, tokenizer: Tokenizer): TokenizedDemo {
  const rendered = tokenizer.renderChat(d.context);
  const prompt = promptIds(rendered);
  const reply = [...tokenizer.encode(d.reply), tokenizer.stopIds[0]!];
  return { tokenIds: [...prompt, ...reply], lossMask: [...prompt.map(() => 0), ...reply.map(() => 1)] };
}

/**
 * Plays the first `tasks` tasks of `split` of every environment with the environment's reference solver
 * (`solve`) in every seat bound to a policy (built-in seats play themselves) and keeps each policy seat's
 * (conversation, reply) pairs. Single-reply episodes whose solver did not reach the top reward are dropped.
 */
export async function collectSolverDemos(
  config: RunConfig,
  envs: readonly PreparedEnvironment[],
  o: { split: string; tasks: number; frozen: readonly string[]; concurrency: number },
): Promise<Demonstration[]> {
  const out: Demonstration[] = [];
  const known = { policies: Object.keys(config.policies), frozen: o.frozen };
  for (const env of envs) {
    const entry = config.environments.find((e) => e.name === env.name)!;
    const top = env.installed.manifest.reward.max;
    const tasks: Task[] = (await env.runtime.listTasks(o.split)).slice(0, o.tasks);
    let refused: string | null = null;
    // Kept per task and joined in task order: the same demonstrations in the same order on every run,
    // however the concurrent episodes finish (the warm-start's batches follow this order).
    const byTask: Demonstration[][] = new Array(tasks.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < tasks.length && refused === null; i = next++) {
        const task = tasks[i]!;
        const seats = resolveSeats(env.name, seatsOf(task, env.installed.manifest.agents), entry.roles, known);
        const policyOf = new Map(seats.agents.flatMap((a) => (a.target.kind === "policy" ? [[a.agentId, a.target.name] as const] : [])));
        const pairs: Demonstration[] = [];
        const result = await playEpisode({
          runtime: env.runtime,
          task,
          seed: config.run.seed * 100_003 + i,
          builtinAgents: seats.builtin,
          maxSteps: entry.maxTurns,
          act: async (agent, t, history) => {
            const r = await env.runtime.solve({ task: t, agent, messages: history });
            if (r.kind === "failed") {
              refused = r.failure.message;
              return "";
            }
            const policy = policyOf.get(agent);
            if (policy !== undefined) pairs.push({ policy, env: env.name, context: history.map((m) => ({ ...m })), reply: r.value });
            return r.value;
          },
        });
        if (result.kind !== "done") continue;
        const single = pairs.length === 1 && seats.agents.length === 1;
        if (single && !isSuccess(result.rewards[seats.agents[0]!.agentId] ?? 0, top)) continue;
        byTask[i] = pairs;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, tasks.length)) }, worker));
    for (const pairs of byTask) if (pairs) out.push(...pairs);
    if (refused !== null) throw new WarmStartError(`environment '${env.name}' has no reference solver for its policy seats: ${refused}`);
  }
  return out;
}

const JsonlLineSchema = z.object({
  messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() })).min(2),
  policy: z.string().optional(),
});

/** Conversations from a JSONL file; every assistant message is one demonstration (its context: what precedes it). */
export function readJsonlDemos(path: string, defaultPolicy: string): Demonstration[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new WarmStartError(`cannot read '${path}': ${(err as Error).message}`, { cause: err });
  }
  const out: Demonstration[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      throw new WarmStartError(`${path}:${i + 1}: not JSON`, { cause: err });
    }
    const parsed = JsonlLineSchema.safeParse(json);
    if (!parsed.success) throw new WarmStartError(`${path}:${i + 1}: expected {"messages": [{"role", "content"}...], "policy"?}: ${parsed.error.issues[0]?.message}`);
    const { messages, policy } = parsed.data;
    messages.forEach((m, k) => {
      if (m.role === "assistant" && k > 0) out.push({ policy: policy ?? defaultPolicy, env: "jsonl", context: messages.slice(0, k), reply: m.content });
    });
  });
  if (out.length === 0) throw new WarmStartError(`${path} holds no assistant message to learn from`);
  return out;
}
