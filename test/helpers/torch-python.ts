import { spawnSync } from "node:child_process";
import { describe, it } from "vitest";

/** CI must run the torch trainer's tests: without an interpreter that imports torch they fail there. */
export const TORCH_REQUIRED = process.env.AGENTJET_REQUIRE_TORCH === "1";

/** The first of `$AGENTJET_TORCH_PYTHON`, `python3` (PATH), `/usr/bin/python3` (Debian's python3-torch) that imports torch. */
function findTorchPython(): { python: string; torch: string } | undefined {
  const candidates = [process.env.AGENTJET_TORCH_PYTHON, "python3", "/usr/bin/python3"].filter((p): p is string => !!p);
  for (const python of new Set(candidates)) {
    const r = spawnSync(python, ["-c", "import torch; print(torch.__version__)"], { encoding: "utf8", timeout: 60_000 });
    if (r.status === 0) return { python, torch: r.stdout.trim() };
  }
  return undefined;
}

/** Asked once per test file that imports this. */
export const torchPython = findTorchPython();
if (torchPython) console.info(`torch trainer tests: ${torchPython.python} (torch ${torchPython.torch})`);

/**
 * A describe block that needs Python with torch. Skips loudly without one, or fails when
 * AGENTJET_REQUIRE_TORCH=1 (CI installs Debian's python3-torch).
 */
export function describeTorch(name: string, fn: (python: string) => void): void {
  if (torchPython) {
    describe(name, () => fn(torchPython.python));
    return;
  }
  const why = "no interpreter imports torch (tried $AGENTJET_TORCH_PYTHON, python3, /usr/bin/python3; apt install python3-torch)";
  if (TORCH_REQUIRED) {
    describe(name, () => {
      it("needs Python with torch", () => {
        throw new Error(`AGENTJET_REQUIRE_TORCH=1 but ${why}`);
      });
    });
    return;
  }
  console.warn(`\n!!! SKIPPED "${name}": ${why}\n`);
  describe.skip(name, () => fn("python3"));
}
