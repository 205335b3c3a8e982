import { parseArgs, type ParseArgsConfig } from "node:util";
import { AgentJetError } from "../../../errors/index.ts";
import { exitCodeFor } from "../command.ts";

/** How an `env` subcommand talks: progress lines on stderr, the result on stdout (one JSON object with --json). */
export interface EnvIo {
  json: boolean;
  progress(line: string): void;
  /** Prints the result: `data` as JSON with --json, else `text`. */
  result(data: Record<string, unknown>, text: string): void;
}

export function createIo(json: boolean): EnvIo {
  return {
    json,
    progress: (line) => process.stderr.write(`${line}\n`),
    result: (data, text) => {
      if (json) process.stdout.write(`${JSON.stringify({ ok: true, ...data })}\n`);
      else if (text) process.stdout.write(`${text}\n`);
    },
  };
}

export class UsageError extends AgentJetError {
  constructor(message: string) {
    super("AJ_ERR_USAGE", message);
  }
}

/** Reports an error (as `{ ok: false, error }` with --json) and gives its exit code. */
export function reportError(io: EnvIo, err: unknown): number {
  const code = (err as { code?: string }).code ?? "AJ_ERR_UNKNOWN";
  const message = err instanceof Error ? err.message : String(err);
  const exit = exitCodeFor(code);
  if (io.json) process.stdout.write(`${JSON.stringify({ ok: false, error: { code, message } })}\n`);
  process.stderr.write(`agentjet env: ${message}\n`);
  return exit;
}

const JSON_OPTION = { json: { type: "boolean", default: false } } as const satisfies ParseArgsConfig["options"];
/** `--project <dir>`: the project whose store and agentjet.lock a subcommand reads or writes. */
export const PROJECT_OPTION = { project: { type: "string" } } as const satisfies ParseArgsConfig["options"];
/** `--registry <path|url>`: the registry a subcommand resolves from. */
export const REGISTRY_OPTION = { registry: { type: "string" } } as const satisfies ParseArgsConfig["options"];

/**
 * A subcommand's flags (`--json`, which every one takes, and `options`, the ones its help lists: a flag
 * it would ignore is refused), strictly; a malformed flag is a `UsageError`.
 */
export function parse<O extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { ...JSON_OPTION, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `--option k=v` pairs (repeatable). */
export function parsePairs(values: string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const eq = v.indexOf("=");
    if (eq <= 0) throw new UsageError(`${flag} takes key=value, got '${v}'`);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

/** Splits `name@version`. */
export function parseSpec(spec: string): { name: string; version?: string } {
  const at = spec.lastIndexOf("@");
  if (at <= 0) return { name: spec };
  return { name: spec.slice(0, at), version: spec.slice(at + 1) };
}
