import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { describeTorch } from "../helpers/torch-python.ts";

const SCRIPT = fileURLToPath(new URL("../../bench/gpu/actor_update.py", import.meta.url));

interface GpuRow {
  model: string;
  workload: string;
  batch: "unmerged" | "merged" | "tree";
  tokens: number;
  t: number | null;
  loss: number | null;
  tokens_trained: number | null;
}

/**
 * bench/gpu's CPU smoke mode: the trainer's plain-torch tiny model on short workloads runs every code path
 * of the GPU check (workloads, unmerged / merged / tree timing, the results writer) without transformers.
 */
describeTorch("bench/gpu actor_update.py --smoke (CPU, tiny plain-torch model)", (python) => {
  it("writes unmerged, merged and tree rows per workload with finite times and the unmerged loss", { timeout: 180_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), "agentjet-gpu-smoke-"));
    try {
      const r = spawnSync(python, [SCRIPT, "--smoke", "--out", out], {
        encoding: "utf8",
        timeout: 170_000,
        env: { ...process.env, OMP_NUM_THREADS: "1" },
      });
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      const { rows, notes } = JSON.parse(readFileSync(join(out, "results-gpu.json"), "utf8")) as { rows: GpuRow[]; notes: string[] };
      const table = readFileSync(join(out, "RESULTS-gpu.md"), "utf8");
      expect(notes.filter((n) => /FAILED|SKIPPED/.test(n))).toEqual([]);
      for (const workload of ["appworld", "werewolves"]) {
        const got = rows.filter((row) => row.workload === workload);
        expect(got.map((row) => row.batch)).toEqual(["unmerged", "merged", "tree"]);
        const [unmerged, merged, tree] = got as [GpuRow, GpuRow, GpuRow];
        for (const row of got) {
          expect(Number.isFinite(row.t) && row.t! > 0, `${workload} ${row.batch} time ${row.t}`).toBe(true);
          expect(row.tokens_trained).toBe(unmerged.tokens_trained);
          expect(Math.abs(row.loss! - unmerged.loss!), `${workload} ${row.batch} loss`).toBeLessThan(1e-5 * Math.max(1, Math.abs(unmerged.loss!)));
          expect(table).toMatch(new RegExp(`\\| agentjet-tiny \\| ${workload} \\| \\d+ \\| ${row.batch} \\|`));
        }
        expect(merged.tokens).toBeLessThan(unmerged.tokens);
        expect(tree.tokens).toBeLessThanOrEqual(merged.tokens);
      }
      // Werewolves' decision timelines share the history before them with the main timeline: a trie computes it once.
      const wolves = rows.filter((row) => row.workload === "werewolves");
      expect(wolves[2]!.tokens).toBeLessThan(wolves[1]!.tokens);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
