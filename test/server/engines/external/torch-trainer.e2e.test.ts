import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readlink, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterEach, expect, it } from "vitest";
import { buildServer } from "../../../../server/app/build-server.ts";
import { RunConfigSchema } from "../../../../server/config/run-config.ts";
import { buildVllmDouble, type VllmDouble } from "../../../doubles/vllm-double.ts";
import { createEmbeddedTokenizer } from "../../../../server/tokenizers/embedded.ts";
import { mergeTimelines } from "../../../../server/training/merge-timelines.ts";
import { runTraining } from "../../../../hub/train/run-training.ts";
import { describeTorch } from "../../../helpers/torch-python.ts";
import { quiet, readEvents } from "../../../hub/train/helpers.ts";
import { claimSolver, postChat } from "../../helpers/build-test-server.ts";
import { startTorchTrainer, type TorchTrainerProcess } from "./torch-trainer-process.ts";

interface TrainStepBody {
  expected_version: number;
  samples: Array<{ token_ids: number[]; loss_mask: number[] }>;
}

/**
 * The swarm server with the `openai-tokens` engine in full-weight mode, two vLLM test doubles (dev-mode
 * reload routes) and the REAL Python trainer service training the plain-torch tiny model on CPU: two
 * steps of chat calls -> merged samples -> train_step (torch) -> publish v<N> -> each replica drained and
 * reloaded from the publish folder's `current` link -> the next calls served and recorded at v<N>.
 */
describeTorch("swarm server + real torch trainer (tiny model, CPU) + vLLM doubles, full weights", (python) => {
  let trainer: TorchTrainerProcess | undefined;
  let app: FastifyInstance | undefined;
  let replicas: Array<VllmDouble & { url: string }> = [];
  let dir: string | undefined;
  afterEach(async () => {
    await app?.close();
    await Promise.all(replicas.map((r) => r.app.close()));
    await trainer?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    app = trainer = dir = undefined;
    replicas = [];
  });

  it("trains two steps through the Python service; the trained ids are the served ids", async () => {
    dir = await mkdtemp(join(tmpdir(), "aj-torch-e2e-"));
    const publishDir = join(dir, "publish");
    const vocabSize = createEmbeddedTokenizer().vocabSize;
    trainer = await startTorchTrainer(python, { vocabSize, publishDir });
    expect(await readlink(join(publishDir, "current"))).toBe("v0");
    for (let i = 0; i < 2; i++) {
      const d = buildVllmDouble({ model: "policy-model", vocabSize, devMode: true, weightsDir: join(publishDir, "current") });
      replicas.push(Object.assign(d, { url: await d.app.listen({ host: "127.0.0.1", port: 0 }) }));
    }
    const trainSteps: TrainStepBody[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      if (String(input).endsWith("/v1/train_step")) trainSteps.push(JSON.parse(String(init?.body)) as TrainStepBody);
      return fetch(input, init);
    };
    const config = RunConfigSchema.parse({
      policies: {
        main: {
          tokenizer: "embedded",
          engine: { kind: "openai-tokens", baseUrls: replicas.map((r) => r.url), model: "policy-model", maxContext: 2048, weights: "full", trainer: { url: trainer.url } },
        },
      },
      environments: [{ name: "smoke", roles: { solver: "main" } }],
      sampling: { maxTokens: 8 },
    });
    app = await buildServer({ config, dbPath: ":memory:", keySecret: "test-secret", reclaimTimer: false, fetch: recordingFetch });
    const store = app.agentjet.store;
    const policy = app.agentjet.policies.get("main")!;
    let trainedTokens = 0;

    for (let step = 1; step <= 2; step++) {
      const episodeId = `e${step}`;
      const key = claimSolver(app, episodeId, `t${step}`);
      const chat = (messages: unknown[]) => postChat(app!, key, { messages, temperature: 1, seed: step });
      const first = await chat([{ role: "user", content: "Hi" }]);
      expect(first.statusCode, first.body).toBe(200);
      const reply = first.json().choices[0].message.content as string;
      const second = await chat([
        { role: "user", content: "Hi" },
        { role: "assistant", content: reply },
        { role: "user", content: "More" },
      ]);
      expect(second.statusCode, second.body).toBe(200);

      const calls = store.tracker.callsOf(episodeId);
      expect(calls.map((c) => c.version)).toEqual([step - 1, step - 1]);
      const { timelines } = mergeTimelines(calls, { match: "text", ignoreTools: true, overflow: "drop" });
      const samples = timelines.map((t) => ({ tokenIds: t.tokenIds, lossMask: t.lossMask, logprobs: t.logprobs, advantage: step === 1 ? 1 : -1, weight: 1 }));
      const metrics = await policy.engine.train({ samples });
      expect(metrics.version).toBe(step);

      // What the Python service trained: exactly the merged samples, and their trained ids are the served ids.
      const sent = trainSteps[step - 1]!;
      expect(sent.expected_version).toBe(step - 1);
      expect(sent.samples.map((s) => s.token_ids)).toEqual(samples.map((s) => s.tokenIds));
      const trained = sent.samples.flatMap((s) => s.token_ids.filter((_, i) => s.loss_mask[i] === 1));
      expect(trained).toEqual(calls.flatMap((c) => c.outputIds));
      const served = replicas.flatMap((r) => r.served);
      for (const c of calls) expect(served.some((s) => s.outputIds.length === c.outputIds.length && c.outputIds.every((id, i) => s.outputIds[i] === id))).toBe(true);
      trainedTokens += trained.length;

      // Published as v<step>; each replica reloaded it (drained first: no call met two sets of weights).
      expect(await readlink(join(publishDir, "current"))).toBe(`v${step}`);
      const published = await realpath(join(publishDir, `v${step}`));
      for (const r of replicas) expect(r.reloads.at(-1)).toBe(published);
      expect(replicas.flatMap((r) => r.served).some((s) => s.mixedWeights)).toBe(false);

      const after = await chat([{ role: "user", content: "Again" }]);
      expect(after.statusCode, after.body).toBe(200);
      expect(store.tracker.callsOf(episodeId).at(-1)?.version).toBe(step);
    }

    const status = (await (await fetch(`${trainer.url}/v1/status`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ protocol: 1, version: 2, mode: "full", model: "agentjet-tiny", steps: 2, tokens_trained: trainedTokens });
    expect(replicas.map((r) => r.reloads.length)).toEqual([2, 2]);
  }, 120_000);

  // `agentjet train` as docs/deploy.md runs it, on CPU: the real trainer, a vLLM double in dev mode.
  it("a run survives its trainer: killed mid-run it fails with the trainer's words and keeps its checkpoints; --resume after a restart finishes; a new run on a trained trainer is refused before any episode", async () => {
    dir = await mkdtemp(join(tmpdir(), "aj-torch-run-"));
    const publishDir = join(dir, "publish");
    const vocabSize = createEmbeddedTokenizer().vocabSize;
    trainer = await startTorchTrainer(python, { vocabSize, publishDir });
    const d = buildVllmDouble({ model: "policy", vocabSize, devMode: true, weightsDir: join(publishDir, "current") });
    const replicaUrl = await d.app.listen({ host: "127.0.0.1", port: 0 });
    replicas.push(Object.assign(d, { url: replicaUrl }));
    const config = (url: string) =>
      RunConfigSchema.parse({
        run: { steps: 3, checkpointEvery: 1 },
        policies: {
          main: { tokenizer: "embedded", engine: { kind: "openai-tokens", baseUrls: [replicaUrl], model: "policy", maxContext: 256, weights: "full", trainer: { url } } },
        },
        environments: [{ name: "arith", split: "train", roles: { solver: "main" } }],
        sampling: { temperature: 1, maxTokens: 4 },
        batching: { strategy: "tasks", batchTasks: 2, groupSize: 2, filterEqualRewards: false },
        clients: { local: 1, concurrency: 4 },
        eval: { every: 0 },
      });
    const runDir = join(dir, "run");
    const first = trainer;
    const killed = await runTraining({
      config: config(first.url),
      runDir,
      projectDir: dir,
      port: 0,
      progress: quiet,
      report: false,
      onEvent: (e) => {
        if (e.type === "checkpoint" && e.step === 1) void first.kill();
      },
    });
    expect(killed.reason).toBe("failed");
    expect(String((killed.error as Error).message)).toMatch(/without a training step .*: the training step of 'main' failed: POST http:\/\/127\.0\.0\.1:\d+\/v1\/train_step: fetch failed \((ECONNREFUSED|ECONNRESET)\)/);
    expect(JSON.parse(readFileSync(join(runDir, "checkpoints", "latest.json"), "utf8"))).toEqual({ checkpoint: `step-00000${killed.step}` });
    // The start reloaded version 0 (published again), then each step its own.
    expect(d.reloads.slice(0, 2)).toEqual([await realpath(join(publishDir, "v0")), await realpath(join(publishDir, "v1"))]);

    trainer = await startTorchTrainer(python, { vocabSize, publishDir });
    const resumed = await runTraining({ config: config(trainer.url), runDir, resume: true, projectDir: dir, port: 0, progress: quiet, report: false });
    expect(resumed).toMatchObject({ reason: "done", versions: { main: 3 } });
    expect(readEvents(runDir).flatMap((e) => (e.type === "step" ? [e.step] : []))).toEqual([1, 2, 3]);
    const status = (await (await fetch(`${trainer.url}/v1/status`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ version: 3 });

    // The trainer now holds that run's weights: a new run would have sampled them as its version 0.
    const served = d.served.length;
    const other = join(dir, "other");
    await expect(runTraining({ config: config(trainer.url), runDir: other, projectDir: dir, port: 0, progress: quiet, report: false })).rejects.toMatchObject({
      code: "AJ_ERR_TRAINER_STATE",
    });
    expect(d.served.length).toBe(served);
    expect(existsSync(join(other, "checkpoints"))).toBe(false);
  }, 300_000);
});
