import { writeFileSync } from "node:fs";
import { AgentJetError } from "../../errors/index.ts";

/** A command's `--out` file could not be written (a missing folder, no permission, a full disk). */
export class OutputUnwritableError extends AgentJetError {
  constructor(path: string, cause: unknown) {
    const why = (cause as NodeJS.ErrnoException).code ?? (cause instanceof Error ? cause.message : String(cause));
    super("AJ_ERR_OUTPUT_UNWRITABLE", `cannot write ${path} (${why}): check that its folder exists and is writable`, { cause });
  }
}

/** Writes a command's output file (`--out`, a tarball, a registry file), or throws `OutputUnwritableError` (a coded error, never a stack trace). */
export function writeOutputFile(path: string, content: string | Uint8Array): void {
  try {
    writeFileSync(path, content);
  } catch (err) {
    throw new OutputUnwritableError(path, err);
  }
}
