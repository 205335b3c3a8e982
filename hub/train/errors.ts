import { AgentJetError, withCode } from "../../errors/index.ts";

/** Errors of `agentjet train`. An episode that fails is an outcome, never one of these. */
export class TrainError extends AgentJetError {}

export class RunDirInUseError extends TrainError {
  /** `neverStepped`: its run stopped (or failed) before its first checkpoint, so there is nothing to lose by starting afresh. */
  constructor(runDir: string, neverStepped = false) {
    super(
      "AJ_ERR_TRAIN_RUN_DIR_IN_USE",
      neverStepped
        ? `run directory '${runDir}' holds a run that stopped before its first checkpoint (run.db, no step kept): to start afresh with this config, remove the directory or set another run.dir (--run-dir); --resume ${runDir} plays it again from step 0 with its saved config.yaml`
        : `run directory '${runDir}' already holds a run (run.db); continue it with --resume ${runDir}, or set another run.dir (--run-dir)`,
    );
  }
}

/** Another live process runs in the same run directory (`<run-dir>/run.lock`). */
export class RunDirLockedError extends TrainError {
  constructor(runDir: string, holder: { pid: number; host: string; since: string } | null, lockFile: string) {
    const who = holder ? `process ${holder.pid} on ${holder.host}, since ${holder.since}` : "another process";
    super(
      "AJ_ERR_TRAIN_RUN_DIR_IN_USE",
      `run directory '${runDir}' is in use by ${who}: stop it first (a stopped run continues: agentjet train --resume, or agentjet serve on the same run directory), or pick another --run-dir; if that process is gone, remove ${lockFile}`,
    );
  }
}

export class NoCheckpointError extends TrainError {
  constructor(runDir: string, why: string) {
    super("AJ_ERR_TRAIN_NO_CHECKPOINT", `cannot resume '${runDir}': ${why}`);
  }
}

export class UnknownExampleError extends TrainError {
  constructor(name: string, known: readonly string[]) {
    super("AJ_ERR_TRAIN_UNKNOWN_EXAMPLE", `no example config '${name}'; the examples are: ${known.join(", ")}`);
  }
}

export class EnvironmentSetupError extends TrainError {
  constructor(env: string, cause: unknown) {
    super("AJ_ERR_TRAIN_ENVIRONMENT", `environment '${env}' could not be installed or opened: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** A config entry's `path` holds another plugin, or another version, than the entry names. */
export class PluginMismatchError extends withCode(TrainError, "AJ_ERR_TRAIN_PLUGIN_MISMATCH") {}

/** Batches keep finishing and nothing trains; `what` says what was counted, `why` the likely cause. */
export class NoProgressError extends TrainError {
  constructor(what: string, why = "the batching strategy or filtering keeps dropping every batch") {
    super("AJ_ERR_TRAIN_NO_PROGRESS", `${what}: ${why}`);
  }
}

export class WarmStartError extends TrainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("AJ_ERR_TRAIN_WARM_START", `warm-start: ${message}`, options);
  }
}

/**
 * The run directory could not be written (permissions, a full disk). The run stops: what was written
 * before stays (run.db, the last checkpoint), and `--resume` continues once the cause is fixed.
 */
export class StorageError extends TrainError {
  readonly path: string;
  constructor(path: string, action: string, cause: unknown) {
    // errno codes say it all (EACCES, ENOSPC); a coded error of ours (an engine's save: its trainer down) needs its words
    const code = cause instanceof Error ? (cause as NodeJS.ErrnoException).code : undefined;
    const why = !(cause instanceof Error) ? String(cause) : code === undefined ? cause.message : code.startsWith("AJ_ERR_") ? `${code}: ${cause.message}` : code;
    super("AJ_ERR_TRAIN_STORAGE", `cannot ${action} '${path}' (${why}); the run stops, keeping what it wrote before`, { cause });
    this.path = path;
  }
}
