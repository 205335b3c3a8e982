import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TORCH_REQUIRED, torchPython } from "../../../helpers/torch-python.ts";

const SERVICE_DIR = fileURLToPath(new URL("../../../../server/engines/torch-trainer/", import.meta.url));
/** The interpreter with torch when there is one; else python3, where only the torch-free tests run. */
const python = torchPython?.python ?? "python3";
const hasPython = spawnSync(python, ["--version"]).status === 0;
if (!hasPython) console.warn("\n!!! SKIPPED: python3 not found; the torch trainer's Python tests did NOT run\n");

/**
 * Runs the Python service's own unittest suite, so `npm test` covers it: the tiny plain-torch model's
 * training, checkpoints, publish, and the two-process gloo data-parallel check. Without torch those
 * skip loudly (`SKIPPED:`), which fails under AGENTJET_REQUIRE_TORCH=1 (CI); the Hugging Face + LoRA
 * tests need transformers and peft, which Debian lacks, and skip as `SKIPPED (optional):`.
 */
describe.skipIf(!hasPython)(`torch-trainer Python tests (unittest, ${python})`, () => {
  it("pass, with the torch tests run where torch imports", () => {
    const r = spawnSync(python, ["-m", "unittest", "discover", "-s", "tests", "-t", "."], {
      cwd: SERVICE_DIR,
      encoding: "utf8",
      timeout: 300_000,
      env: { ...process.env, OMP_NUM_THREADS: "1" },
    });
    const out = `${r.stdout}\n${r.stderr}`;
    const skipped = out.split("\n").filter((l) => l.includes("SKIPPED"));
    if (skipped.length > 0) console.warn(skipped.join("\n"));
    expect(r.status, out).toBe(0);
    expect(out).toMatch(/^OK/m);
    if (TORCH_REQUIRED) expect(skipped.filter((l) => /SKIPPED:/.test(l)), "torch tests skipped under AGENTJET_REQUIRE_TORCH=1").toEqual([]);
  }, 300_000);
});
