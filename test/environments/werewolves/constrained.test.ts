import { describe, expect, it } from "vitest";
import { environment } from "../../../environments/werewolves/src/index.ts";
import { PLAYERS } from "../../../environments/werewolves/src/roles.ts";
import type { Observation, Turn } from "../../../sdk/env/protocol.ts";
import { EmbeddedModelSchema, OptimizerSchema } from "../../../server/config/run-config.ts";
import { createEmbeddedEngine } from "../../../server/engines/embedded/index.ts";
import { buildTestServer } from "../../server/helpers/build-test-server.ts";
import { embeddedTokenizer as tok } from "../../server/helpers/scripted-engine.ts";

const CONTEXT = 4096;

describe("werewolves: decisions constrained by the observation's JSON schema", () => {
  it("an untrained embedded policy plays only legal moves through the real server (no invalid reply while the conversation fits the context)", { timeout: 120_000 }, async () => {
    const engine = createEmbeddedEngine({
      vocabSize: tok.vocabSize,
      model: EmbeddedModelSchema.parse({ layers: 1, dim: 16, heads: 2, context: CONTEXT, seed: 7 }),
      optimizer: OptimizerSchema.parse({}),
    });
    const app = await buildTestServer({ main: engine });
    try {
      const store = app.agentjet.store;
      let played = 0;
      for (const task of environment.generateTasks!({ split: "test", seed: 0, count: 2 })) {
        store.register({ episodeId: task.id, taskId: task.id, env: "werewolves", agents: { wolf: { kind: "policy", target: "main" } } });
        const claim = store.claim();
        if (claim.kind !== "claimed") throw new Error("no claim");
        const key = claim.keys.wolf!;
        const wolves = task.agents!.filter((a) => a.role === "werewolf").map((a) => a.id);
        const episode = environment.createEpisode();
        let turn = (await episode.reset({ task, seed: 1, builtinAgents: PLAYERS.filter((p) => !wolves.includes(p)) })) as Turn;
        const conversations = new Map<string, Array<{ role: string; content: string }>>();
        let overflowed = 0;
        while (!turn.done) {
          const actions: Record<string, string> = {};
          for (const [p, obs] of Object.entries(turn.observations) as Array<[string, Observation]>) {
            const conversation = conversations.get(p) ?? [];
            conversations.set(p, conversation);
            conversation.push(...obs.messages);
            expect(obs.responseFormat?.type).toBe("json_schema");
            const res = await app.inject({
              method: "POST",
              url: "/v1/chat/completions",
              headers: { authorization: `Bearer ${key}` },
              payload: { model: "main", messages: conversation, response_format: { type: "json_schema", json_schema: { name: obs.responseFormat!.name, schema: obs.responseFormat!.schema, strict: true } } },
            });
            if (res.statusCode !== 200) {
              // Too little context left for the shortest legal answer: a 400 naming max_tokens.
              expect(res.json()).toMatchObject({ error: { param: "max_tokens" } });
              overflowed++;
              actions[p] = "";
            } else {
              const body = res.json() as { choices: Array<{ message: { content: string } }>; usage: { prompt_tokens: number } };
              actions[p] = body.choices[0]!.message.content;
              if (actions[p] === "") overflowed++;
            }
            conversation.push({ role: "assistant", content: actions[p]! });
          }
          turn = (await episode.step({ actions })) as Turn;
        }
        const info = turn.info as { decisions: number; invalid: number; fallbacks: number; byRole: Record<string, { decisions: number }> };
        expect(info.decisions).toBeGreaterThan(10);
        expect(info.byRole.werewolf!.decisions).toBe(info.decisions);
        // Every reply the model could make is legal: the only invalid ones are the calls whose conversation
        // outgrew the model's context (no room for any answer), not the constraint's doing.
        expect(info.invalid).toBe(overflowed);
        expect(info.decisions).toBeGreaterThan(overflowed);
        played++;
      }
      expect(played).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });
});
