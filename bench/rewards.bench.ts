import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { onnxAvailable, OnnxScorer } from "../sdk/rewards/index.ts";
import { linearScorerOnnx } from "../test/helpers/onnx-model.ts";
import { type Bench, median } from "./harness.ts";

/**
 * ONNX reward-model throughput through the client's scoring processes: episodes scored per second when the
 * episodes a client ends together are batched into one `session.run`, against one run per episode.
 * A bag-of-words linear model (1,000 words) on 60-word replies.
 */
export const bench: Bench = {
  name: "rewards",
  async run({ quick, log }) {
    if (!onnxAvailable()) {
      log("onnxruntime-node is not installed: skipped");
      return [{ title: "ONNX reward models", columns: ["mode"], rows: [["skipped: onnxruntime-node not installed"]] }];
    }
    const dir = mkdtempSync(join(tmpdir(), "aj-bench-rm-"));
    const V = 1000;
    const words = Array.from({ length: V }, (_, i) => `w${i}`);
    writeFileSync(join(dir, "vocab.json"), JSON.stringify(words));
    writeFileSync(join(dir, "model.onnx"), linearScorerOnnx(words.map((_, i) => Math.sin(i)), 0.1));
    const n = quick ? 256 : 2048;
    const texts = Array.from({ length: n }, (_, k) => Array.from({ length: 60 }, (_, j) => words[(k * 31 + j * 7) % V]).join(" "));
    const runs = quick ? 3 : 7;
    const rows: Array<Array<string | number>> = [];
    const rates: Record<string, number> = {};
    try {
      for (const [mode, opts] of [
        ["batched (up to 64 per run)", { maxBatch: 64 }],
        ["one at a time", { unbatched: true }],
      ] as const) {
        const scorer = new OnnxScorer(opts);
        const vocab = { path: join(dir, "vocab.json"), kind: "bag-of-words" as const };
        const model = join(dir, "model.onnx");
        // Warm: every worker loads onnxruntime and the model's session on its first task.
        for (let w = 0; w < 2; w++) await Promise.all(texts.map((t) => scorer.score(model, vocab, t)));
        const perRun: number[] = [];
        for (let r = 0; r < runs; r++) {
          const t0 = performance.now();
          await Promise.all(texts.map((t) => scorer.score(model, vocab, t)));
          perRun.push((n / (performance.now() - t0)) * 1000);
        }
        await scorer.close();
        rates[mode] = median(perRun);
        rows.push([mode, n, runs, Math.round(median(perRun)), Math.round(Math.min(...perRun)), Math.round(Math.max(...perRun))]);
        log(`${mode}: ${Math.round(median(perRun))} episodes/s`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const ratio = rates["batched (up to 64 per run)"]! / rates["one at a time"]!;
    return [
      {
        title: "ONNX reward models: episodes scored per second (client scoring processes, real onnxruntime-node)",
        columns: ["mode", "episodes per run", "runs", "median /s", "min /s", "max /s"],
        rows,
        notes: [`batched / one at a time: ${ratio.toFixed(1)}x (medians of the same run). Load average at the end: ${loadavg()[0]!.toFixed(1)}.`],
      },
    ];
  },
};
