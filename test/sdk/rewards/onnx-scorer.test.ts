import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EpisodeRewarder, toRange } from "../../../sdk/rewards/episode-rewarder.ts";
import { OnnxScorer, onnxAvailable } from "../../../sdk/rewards/onnx-pool.ts";
import { RewardModelsSchema } from "../../../sdk/rewards/spec.ts";
import { linearScorerOnnx } from "../../helpers/onnx-model.ts";

const dir = mkdtempSync(join(tmpdir(), "aj-onnx-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const VOCAB = ["good", "bad", "great", "é"];
const W = [1, -2, 0.5, 3];
const B = 0.25;
writeFileSync(join(dir, "model.onnx"), linearScorerOnnx(W, B));
writeFileSync(join(dir, "vocab.json"), JSON.stringify(VOCAB));

/** The hand computation: count each vocabulary word, dot with W, add b. */
function byHand(text: string): number {
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  return VOCAB.reduce((s, w, i) => s + words.filter((x) => x === w).length * W[i]!, B);
}

/** The fields of /proc/PID/stat after the command's name: [0] the state, [1] the parent's pid. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** This process's children that run `onnx-worker.mjs`, read from /proc. */
function onnxChildren(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (Number(statFields(name)[1]) === process.pid && readFileSync(`/proc/${name}/cmdline`, "utf8").includes("onnx-worker.mjs")) pids.push(Number(name));
    } catch {
      // the process ended while we read it
    }
  }
  return pids;
}

/** Whether a process is stopped (state T). */
function stopped(pid: number): boolean {
  return statFields(pid)[0] === "T";
}

const present = onnxAvailable();
if (!present) console.warn("SKIPPED: onnxruntime-node (an optional dependency) is not installed; install it with ONNXRUNTIME_NODE_INSTALL=skip npm install");

describe("ONNX reward models", () => {
  it("onnxruntime-node is installed where CI requires it", () => {
    if (process.env.AGENTJET_REQUIRE_ONNX === "1") expect(present).toBe(true);
  });

  it.skipIf(!present)("scores texts through the real onnxruntime-node in the worker pool, as the hand computation says", async () => {
    const scorer = new OnnxScorer();
    try {
      const texts = ["good good bad", "Great! GOOD.", "nothing here", "é é good", ""];
      const scores = await Promise.all(texts.map((t) => scorer.score(join(dir, "model.onnx"), { path: join(dir, "vocab.json"), kind: "bag-of-words" }, t)));
      scores.forEach((s, i) => expect(s).toBeCloseTo(byHand(texts[i]!), 5));
      expect(scorer.batches).toBe(1); // five episodes in one turn: one session.run
    } finally {
      await scorer.close();
    }
  });

  it.skipIf(!present)("batches across episodes by default, and scores one at a time when told to", async () => {
    const texts = Array.from({ length: 40 }, (_, i) => "good ".repeat(i % 5));
    for (const unbatched of [false, true]) {
      const scorer = new OnnxScorer({ unbatched, maxBatch: 16 });
      try {
        const scores = await Promise.all(texts.map((t) => scorer.score(join(dir, "model.onnx"), { path: join(dir, "vocab.json"), kind: "bag-of-words" }, t)));
        scores.forEach((s, i) => expect(s).toBeCloseTo(byHand(texts[i]!), 5));
        expect(scorer.batches).toBe(unbatched ? 40 : 3);
      } finally {
        await scorer.close();
      }
    }
  });

  it.skipIf(!present)("an episode's reward is the model's score mapped into the manifest's range and combined with the environment's", async () => {
    const scorer = new OnnxScorer();
    try {
      const spec = RewardModelsSchema.parse({
        parts: [{ name: "quality", kind: "onnx", model: "model.onnx", tokenizer: { kind: "bag-of-words", vocab: "vocab.json" } }],
        combine: { kind: "sum", weights: { env: 0.5, quality: 0.5 } },
      });
      const rewarder = new EpisodeRewarder(spec, dir, { min: 0, max: 1 }, scorer);
      const reply = "good great";
      const out = await rewarder.score({
        task: { id: "t", split: "train", data: {} },
        envRewards: { solver: 1 },
        conversations: { solver: [{ role: "user", content: "bad bad bad" }, { role: "assistant", content: reply }] },
      });
      const quality = 1 / (1 + Math.exp(-byHand(reply))); // last-assistant: the user's "bad" is not read
      expect(out.parts.solver!.values.quality).toBeCloseTo(quality, 5);
      expect(out.rewards.solver).toBeCloseTo(0.5 * 1 + 0.5 * quality, 5);

      const gate = RewardModelsSchema.parse({ ...spec, combine: { kind: "gate", gate: "env", threshold: 0.5, then: "quality" } });
      const gated = new EpisodeRewarder(gate, dir, { min: 0, max: 1 }, scorer);
      const closed = await gated.score({ task: { id: "t", split: "train", data: {} }, envRewards: { solver: 0 }, conversations: { solver: [{ role: "assistant", content: reply }] } });
      expect(closed.rewards.solver).toBe(0);
    } finally {
      await scorer.close();
    }
  });

  it("maps scores into the range: sigmoid scaled, or clipped", () => {
    expect(toRange(0, "sigmoid", { min: -1, max: 1 })).toBeCloseTo(0);
    expect(toRange(100, "sigmoid", { min: 0, max: 2 })).toBeCloseTo(2);
    expect(toRange(5, "clip", { min: 0, max: 1 })).toBe(1);
    expect(toRange(-5, "clip", { min: 0, max: 1 })).toBe(0);
  });

  it("refuses a spec whose combine names a part that does not exist, or a group judge beside other parts", () => {
    const onnxPart = { name: "q", kind: "onnx", model: "m.onnx", tokenizer: { kind: "characters", vocab: "v.json" } };
    expect(RewardModelsSchema.safeParse({ parts: [onnxPart], combine: { kind: "sum", weights: { nope: 1 } } }).success).toBe(false);
    const group = { name: "rank", kind: "judge", model: "j", rubric: "x", scope: "group" };
    expect(RewardModelsSchema.safeParse({ parts: [onnxPart, group] }).success).toBe(false);
    expect(RewardModelsSchema.safeParse({ parts: [{ ...onnxPart, name: "env" }] }).success).toBe(false);
  });

  it.skipIf(!present)("a model that fails is a RewardModelError, not a score", async () => {
    writeFileSync(join(dir, "broken.onnx"), "not a model");
    const scorer = new OnnxScorer();
    try {
      await expect(scorer.score(join(dir, "broken.onnx"), { path: join(dir, "vocab.json"), kind: "bag-of-words" }, "good")).rejects.toMatchObject({ code: "AJ_ERR_REWARD_MODEL_FAILED" });
    } finally {
      await scorer.close();
    }
  });

  it.skipIf(!present || process.platform !== "linux")("a scoring process that dies fails only the batch it held, with how it ended; the next batch gets a new process", async () => {
    const scorer = new OnnxScorer({ processes: 1 });
    const model = join(dir, "model.onnx");
    const vocab = { path: join(dir, "vocab.json"), kind: "bag-of-words" as const };
    try {
      expect(await scorer.score(model, vocab, "good")).toBeCloseTo(byHand("good"), 5);
      const [pid, ...more] = onnxChildren();
      expect(more).toEqual([]);
      // Stopped, it cannot answer: the batch sent next is still in flight when the process is killed.
      process.kill(pid!, "SIGSTOP");
      while (!stopped(pid!)) await new Promise((r) => setTimeout(r, 5));
      const held = scorer.score(model, vocab, "good great");
      await new Promise((r) => setTimeout(r, 50));
      process.kill(pid!, "SIGKILL");
      await expect(held).rejects.toMatchObject({ code: "AJ_ERR_REWARD_MODEL_FAILED", message: expect.stringContaining("the ONNX process was killed by SIGKILL") });

      expect(await scorer.score(model, vocab, "bad")).toBeCloseTo(byHand("bad"), 5);
      const [next] = onnxChildren();
      expect(next).toBeDefined();
      expect(next).not.toBe(pid);
    } finally {
      await scorer.close();
    }
    expect(onnxChildren()).toEqual([]); // close waits for every process to exit
  });
});
