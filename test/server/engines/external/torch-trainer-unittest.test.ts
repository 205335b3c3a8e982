import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SERVICE_DIR = fileURLToPath(new URL("../../../../server/engines/torch-trainer/", import.meta.url));
const hasPython = spawnSync("python3", ["--version"]).status === 0;
if (!hasPython) console.warn("\n!!! SKIPPED: python3 not found; the torch trainer's Python tests did NOT run\n");

/** Runs the Python service's own unittest suite, so `npm test` covers it; torch tests skip loudly without torch. */
describe.skipIf(!hasPython)("torch-trainer Python tests (unittest)", () => {
  it("pass (the torch ones skip loudly where torch, transformers or peft are missing)", () => {
    const r = spawnSync("python3", ["-m", "unittest", "discover", "-s", "tests", "-t", "."], { cwd: SERVICE_DIR, encoding: "utf8", timeout: 120_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    if (/SKIPPED:/.test(out)) console.warn(out.split("\n").filter((l) => l.includes("SKIPPED")).join("\n"));
    expect(r.status, out).toBe(0);
    expect(out).toMatch(/^OK/m);
  });
});
