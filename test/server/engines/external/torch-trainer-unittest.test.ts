import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TORCH_REQUIRED, torchPython } from "../../../helpers/torch-python.ts";

const SERVICE_DIR = fileURLToPath(new URL("../../../../server/engines/torch-trainer/", import.meta.url));
/** The interpreter with torch when there is one; else python3, where only the torch-free tests run. */
const python = torchPython?.python ?? "python3";
const hasPython = spawnSync(python, ["--version"]).status === 0;
if (!hasPython) console.warn("\n!!! SKIPPED: python3 not found; the torch trainer's Python tests did NOT run\n");

/** The tests that `unittest -v` reports as ended with `result` ("ok" or "skipped"), by test module and name. */
function testsEnded(out: string, result: "ok" | "skipped"): Array<{ module: string; name: string }> {
  const line = new RegExp(`^(\\w+) \\(tests\\.(\\w+)\\.[\\w.]+\\) \\.\\.\\. ${result}\\b`, "gm");
  return [...out.matchAll(line)].map((m) => ({ module: m[2]!, name: m[1]! }));
}

/**
 * Runs the Python service's own unittest suite, so `npm test` covers it: the tiny plain-torch model's
 * training, checkpoints, publish, and the two-process gloo data-parallel check. Without torch those
 * skip loudly (`SKIPPED:`), which fails under AGENTJET_REQUIRE_TORCH=1 (CI); the Hugging Face + LoRA
 * tests need transformers and peft, which Debian lacks, and skip as `SKIPPED (optional):`.
 */
describe.skipIf(!hasPython)(`torch-trainer Python tests (unittest, ${python})`, () => {
  it("pass, with the torch tests run where torch imports", () => {
    const r = spawnSync(python, ["-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v"], {
      cwd: SERVICE_DIR,
      encoding: "utf8",
      timeout: 300_000,
      env: { ...process.env, OMP_NUM_THREADS: "1" },
    });
    const out = `${r.stdout}\n${r.stderr}`;
    const banners = [...new Set(out.split("\n").filter((l) => l.startsWith("!!! SKIPPED")))];
    const ran = testsEnded(out, "ok");
    const skipped = testsEnded(out, "skipped");
    console.info(`torch trainer Python tests (${python}): ${ran.length} ran, ${skipped.length} skipped${skipped.length > 0 ? `: ${[...new Set(skipped.map((t) => t.module))].join(", ")}` : ""}`);
    if (banners.length > 0) console.warn(banners.join("\n"));
    expect(r.status, out).toBe(0);
    expect(out).toMatch(/^OK/m);
    if (TORCH_REQUIRED) {
      expect(banners.filter((l) => /SKIPPED:/.test(l)), "torch tests skipped under AGENTJET_REQUIRE_TORCH=1").toEqual([]);
      // Only the Hugging Face + LoRA tests may skip (transformers and peft are not packaged by Debian).
      expect(skipped.filter((t) => t.module !== "test_hf_lora_backend")).toEqual([]);
      for (const module of ["test_tiny_model", "test_tiny_backend", "test_loss", "test_tree_attention"]) expect(ran.some((t) => t.module === module), module).toBe(true);
      expect(ran.map((t) => t.name)).toContain("test_two_gloo_processes_make_the_one_process_update");
    }
  }, 300_000);
});
