import { describe, expect, it } from "vitest";
import { FAILURE_KINDS } from "../../../sdk/failure-kinds.ts";
import { probePython, PYTHON, PYTHON_REQUIRED, runPython } from "./run-python.ts";

const python = probePython();
if (!python.ok && !PYTHON_REQUIRED) {
  console.warn(`\n*** SKIPPING the Python SDK tests: ${python.why}. Set AGENTJET_PYTHON, or install python3 (3.9+). CI (CI=true or AGENTJET_REQUIRE_PYTHON=1) fails instead. ***\n`);
}

/** One `python -m unittest <module>` of sdk/python/tests, against real `agentjet serve` processes it spawns. */
async function unittest(module: string): Promise<void> {
  if (!python.ok) throw new Error(`the Python SDK tests need Python 3.9+: ${python.why}`);
  const r = await runPython(["-m", "unittest", "-v", module]);
  expect(r.code, `${PYTHON} -m unittest ${module}\n${r.output}`).toBe(0);
  expect(r.output).toMatch(/\nOK/);
}

describe.skipIf(!python.ok && !PYTHON_REQUIRED)("Python SDK (sdk/python) against a real agentjet serve", () => {
  it("runs with Python 3.9 or newer", () => {
    expect(python.ok, python.ok ? "" : python.why).toBe(true);
  });
  it("speaks the server's failure-kind vocabulary (agentjet.FAILURE_KINDS = sdk/failure-kinds.ts)", async () => {
    const r = await runPython(["-c", "import json, agentjet; print(json.dumps(agentjet.FAILURE_KINDS))"]);
    expect(r.code, r.output).toBe(0);
    expect(JSON.parse(r.output)).toEqual(Object.keys(FAILURE_KINDS));
  });
  it("backs off on connection errors and maps error answers to classes with their AJ_ERR code (no server)", () => unittest("test_transport"), 60_000);
  it("begins, chats, ends and aborts episodes; the context manager aborts on exception; heart-beats outlive the idle timeout", () => unittest("test_episodes"), 180_000);
  it("reports a bad token, an unreachable server and a restart mid-episode", () => unittest("test_failures"), 240_000);
  it("configures, starts and stops an empty agentjet serve with the admin token; agree_sync", () => unittest("test_engine"), 240_000);
  it("trains from a Python client-driven run on a serve it configured: 8 tasks x 4 per step, 3 steps, versions 0->3, calls carry token ids and log-probs", () => unittest("test_training"), 300_000);
  it("runs the examples and the README's 15 lines", () => unittest("test_examples"), 300_000);
});
