import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/** A fresh folder `agentjet-<prefix>-...` under the system's temp folder, for `removeTempDirs` to remove. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `agentjet-${prefix}-`));
  made.push(dir);
  return dir;
}

/** Removes every folder `tempDir` made (call from afterAll, or afterEach). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
