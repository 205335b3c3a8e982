import { AgentJetError, withCode } from "../../errors/index.ts";

/**
 * Errors of `agentjet mcp`'s tools. A tool that throws one answers `isError: true` with
 * `{ ok: false, error: { code, message, details } }` as its structured content; errors of the code it
 * calls (`AJ_ERR_USAGE` from `env init`, `AJ_ERR_STORE_NOT_INSTALLED` from `env test`, ...) keep their codes.
 */
export class McpToolError extends AgentJetError {
  /** Structured facts about the error (config issues, the run's state), when there are any. */
  readonly details: unknown;
  constructor(code: string, message: string, options?: { cause?: unknown; details?: unknown }) {
    super(code, message, options);
    this.details = options?.details;
  }
}

/** Arguments the tool's input schema let through but that do not go together. */
export class InvalidArgumentsError extends withCode(McpToolError, "AJ_ERR_MCP_INVALID_ARGUMENTS") {}

/** No run or sweep with this id or directory, started by this server or recorded in the project. */
export class UnknownProcessError extends McpToolError {
  constructor(ref: string, kind: string) {
    super("AJ_ERR_MCP_UNKNOWN_PROCESS", `no ${kind} '${ref}': give the id ${kind}_start returned, or its directory`);
  }
}

export class NotRunningError extends McpToolError {
  constructor(id: string, state: string) {
    super("AJ_ERR_MCP_NOT_RUNNING", `'${id}' is not running (${state})`);
  }
}

/** A run or sweep started from this server is still running in that directory. */
export class ProcessActiveError extends McpToolError {
  constructor(dir: string, id: string) {
    super("AJ_ERR_MCP_PROCESS_ACTIVE", `'${dir}' is in use by '${id}', still running; stop it first (run_stop / sweep_stop)`);
  }
}

export class InvalidConfigError extends McpToolError {
  constructor(message: string, issues: unknown) {
    super("AJ_ERR_MCP_INVALID_CONFIG", message, { details: { issues } });
  }
}

export class NotARunDirError extends McpToolError {
  constructor(dir: string, missing: string) {
    super("AJ_ERR_MCP_NOT_A_RUN_DIR", `'${dir}' is not a run directory (no ${missing})`);
  }
}

export class EpisodeNotFoundError extends McpToolError {
  constructor(episodeId: string, runDir: string) {
    super("AJ_ERR_MCP_EPISODE_NOT_FOUND", `no episode '${episodeId}' in ${runDir}/run.db`);
  }
}

export class BadCursorError extends McpToolError {
  constructor() {
    super("AJ_ERR_MCP_BAD_CURSOR", "malformed cursor: pass the `next` of the previous page unchanged");
  }
}

/** `agentjet sweep` is not part of this checkout. */
export class SweepUnavailableError extends McpToolError {
  constructor() {
    super("AJ_ERR_MCP_SWEEP_UNAVAILABLE", "this agentjet has no `sweep` command (hub/cli/commands/sweep.ts)");
  }
}

export class SpawnError extends McpToolError {
  constructor(what: string, cause: unknown) {
    super("AJ_ERR_MCP_SPAWN", `could not start ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
