import { describe, expect, it } from "vitest";
import type { Turn } from "../../sdk/env/index.ts";
import { createDefaultAgentLoop } from "../../sdk/swarm/default-agent-loop.ts";
import type { EpisodeHandle } from "../../sdk/swarm/workflow.ts";

describe("the default agent loop: a fresh observation restarts the agent's conversation", () => {
  it("sends the conversation grown by a plain observation, and only the new messages after a fresh one", async () => {
    const turns: Turn[] = [
      { observations: { a: { messages: [{ role: "user", content: "one" }] } }, done: false },
      { observations: { a: { messages: [{ role: "user", content: "two" }] } }, done: false },
      { observations: { a: { messages: [{ role: "user", content: "three" }], fresh: true } }, done: false },
      { observations: {}, done: true, rewards: { a: 1 } },
    ];
    let next = 0;
    const sent: string[][] = [];
    const fetch = (async (_url: string, init: { body: string }) => {
      sent.push((JSON.parse(init.body) as { messages: Array<{ content: string }> }).messages.map((m) => m.content));
      return new Response(JSON.stringify({ choices: [{ message: { content: `reply${sent.length}` } }] }));
    }) as unknown as typeof globalThis.fetch;
    let ended: Record<string, number> | undefined;
    const episode = {
      episodeId: "e1",
      task: { id: "t1", split: "test", data: {} },
      seed: 1,
      purpose: "train",
      attempt: 0,
      maxTurns: 10,
      agents: { a: { baseUrl: "http://x/v1", apiKey: "k", model: "m" } },
      builtinAgents: [],
      env: { name: "e", version: "0.1.0", reward: { min: 0, max: 1 }, reset: async () => ({ kind: "ok", value: turns[next++]! }), step: async () => ({ kind: "ok", value: turns[next++]! }) },
      signal: new AbortController().signal,
      end: (rewards: Record<string, number>) => void (ended = rewards),
      abort: (reason: unknown) => expect.fail(`aborted: ${JSON.stringify(reason)}`),
      agreeSync: () => undefined,
    } as unknown as EpisodeHandle;
    await createDefaultAgentLoop({ fetch })(episode);
    expect(sent).toEqual([["one"], ["one", "reply1", "two"], ["three"]]);
    expect(ended).toEqual({ a: 1 });
  });
});
