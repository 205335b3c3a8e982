import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildServer } from "../../../../server/app/build-server.ts";
import { RunConfigSchema } from "../../../../server/config/run-config.ts";
import { createEmbeddedTokenizer } from "../../../../server/tokenizers/embedded.ts";
import { mergeTimelines } from "../../../../server/training/merge-timelines.ts";
import { claimSolver, postChat } from "../../helpers/build-test-server.ts";
import { startDoubles, type DoubleRig } from "./doubles.ts";

/**
 * The swarm server configured with the `openai-tokens` engine (built by its own engine factory from the
 * run config) against the vLLM and trainer test doubles: chat calls -> recorded ids -> merged sample ->
 * train step -> publish -> the next call is served and recorded at the new version.
 */
describe("swarm server + openai-tokens engine + trainer (test doubles, loopback HTTP)", () => {
  let rig: DoubleRig | undefined;
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    await rig?.close();
    app = undefined;
    rig = undefined;
  });

  it("runs a full training step, and the trained ids are the served ids", async () => {
    const vocabSize = createEmbeddedTokenizer().vocabSize;
    rig = await startDoubles({ replicas: 2, vllm: { vocabSize, model: "policy-model" } });
    const engine = rig.config({ model: "policy-model", maxContext: 2048 });
    const config = RunConfigSchema.parse({
      policies: { main: { tokenizer: "embedded", engine } },
      environments: [{ name: "smoke", roles: { solver: "main" } }],
      sampling: { maxTokens: 8 },
    });
    app = await buildServer({ config, dbPath: ":memory:", keySecret: "test-secret", reclaimTimer: false });
    const store = app.agentjet.store;
    const key = claimSolver(app);
    const chat = (messages: unknown[]) => postChat(app!, key, { messages, temperature: 1, seed: 3 });

    const first = await chat([{ role: "user", content: "Hi" }]);
    expect(first.statusCode).toBe(200);
    const reply = first.json().choices[0].message.content as string;
    const second = await chat([
      { role: "user", content: "Hi" },
      { role: "assistant", content: reply },
      { role: "user", content: "More" },
    ]);
    expect(second.statusCode).toBe(200);

    const calls = store.tracker.callsOf("e1");
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => c.version)).toEqual([0, 0]);
    const served = rig.replicas.flatMap((r) => r.served);
    for (const c of calls) expect(served.some((s) => c.outputIds.every((id, i) => s.outputIds[i] === id))).toBe(true);

    const { timelines } = mergeTimelines(calls, { match: "text", ignoreTools: true, overflow: "drop" });
    const batch = {
      samples: timelines.map((t) => ({ tokenIds: t.tokenIds, lossMask: t.lossMask, logprobs: t.logprobs, advantage: 1, weight: 1 })),
    };
    const policy = app.agentjet.policies.get("main")!;
    const metrics = await policy.engine.train(batch);
    expect(metrics.version).toBe(1);

    const received = rig.trainer.received.trainSteps[0]!.samples;
    expect(received.map((s) => s.token_ids)).toEqual(batch.samples.map((s) => s.tokenIds));
    const trained = received.flatMap((s) => s.token_ids.filter((_, i) => s.loss_mask[i] === 1));
    expect(trained).toEqual(calls.flatMap((c) => c.outputIds));

    const third = await chat([{ role: "user", content: "Again" }]);
    expect(third.statusCode).toBe(200);
    expect(store.tracker.callsOf("e1").at(-1)?.version).toBe(1);
    expect(rig.replicas.flatMap((r) => r.served).filter((s) => s.model === "policy-model-v1")).toHaveLength(1);
  });
});
