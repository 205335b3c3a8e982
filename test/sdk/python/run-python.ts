import { spawn, spawnSync } from "node:child_process";
import { delimiter, join } from "node:path";

export const REPO = join(import.meta.dirname, "..", "..", "..");
export const PY_SDK = join(REPO, "sdk", "python");

/** The interpreter the Python SDK tests run with: `$AGENTJET_PYTHON`, else `python3` on PATH. */
export const PYTHON = process.env.AGENTJET_PYTHON ?? "python3";

/** CI must run these tests: a missing or too old Python fails there instead of skipping. */
export const PYTHON_REQUIRED = process.env.CI === "true" || process.env.AGENTJET_REQUIRE_PYTHON === "1";

/** `major.minor` of PYTHON when it runs and is 3.9 or newer; otherwise why not. */
export function probePython(python = PYTHON): { ok: true; version: string } | { ok: false; why: string } {
  const r = spawnSync(python, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" });
  if (r.error || r.status !== 0) return { ok: false, why: `'${python}' does not run (${r.error?.message ?? r.stderr.trim()})` };
  const version = r.stdout.trim();
  const [major, minor] = version.split(".").map(Number);
  if (major !== 3 || (minor ?? 0) < 9) return { ok: false, why: `'${python}' is Python ${version}; the SDK needs 3.9 or newer` };
  return { ok: true, version };
}

export interface PythonResult {
  code: number;
  output: string;
}

/** Runs `python args...` in the repo with the SDK (sdk/python/src) and its test helpers importable. */
export function runPython(args: string[], env: Record<string, string> = {}, python = PYTHON): Promise<PythonResult> {
  return new Promise((resolve, reject) => {
    const pythonPath = [join(PY_SDK, "src"), join(PY_SDK, "tests"), process.env.PYTHONPATH].filter(Boolean).join(delimiter);
    const child = spawn(python, args, {
      cwd: REPO,
      env: { ...process.env, PYTHONPATH: pythonPath, PYTHONUNBUFFERED: "1", AGENTJET_NODE: process.execPath, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code: code ?? 1, output }));
  });
}
