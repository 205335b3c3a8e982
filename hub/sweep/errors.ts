/** Errors of `agentjet sweep`. A run that fails is an outcome recorded in campaign.json, never one of these. */
export class SweepError extends Error {
  readonly code: string;
  /** Bad input (the sweep file, a field path, the flags): the CLI exits 2. Otherwise 1, or 3 for a missing file. */
  readonly kind: "usage" | "not-found" | "failure";
  constructor(code: string, kind: SweepError["kind"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SweepError";
    this.code = code;
    this.kind = kind;
  }
}

/** The sweep file is not YAML, or does not match the sweep schema. */
export class InvalidSweepFileError extends SweepError {
  constructor(source: string, details: string, options?: { cause?: unknown }) {
    super("AJ_ERR_SWEEP_INVALID_FILE", "usage", `${source}: ${details}`, options);
  }
}

/** A sweep file, its base config or a campaign's file could not be read. */
export class SweepFileNotFoundError extends SweepError {
  constructor(path: string, why: string) {
    super("AJ_ERR_SWEEP_NOT_FOUND", "not-found", `cannot read '${path}': ${why}`);
  }
}

/** A dotted path (a parameter or an override) names no run config field. */
export class UnknownFieldError extends SweepError {
  readonly field: string;
  constructor(field: string, why: string) {
    super("AJ_ERR_SWEEP_UNKNOWN_FIELD", "usage", `unknown run config field '${field}': ${why} (every field: agentjet config docs)`);
    this.field = field;
  }
}

/** The search has nothing to run (an empty value list, no parameters and no seeds), or a value spec is unusable. */
export class EmptySearchError extends SweepError {
  constructor(message: string) {
    super("AJ_ERR_SWEEP_EMPTY", "usage", message);
  }
}

/** An expanded run's config fails the run config's schema. */
export class InvalidRunConfigError extends SweepError {
  constructor(runId: string, details: string) {
    super("AJ_ERR_SWEEP_INVALID_CONFIG", "usage", `run ${runId}: the expanded config is not a valid run config: ${details}`);
  }
}

/** A new sweep was pointed at a campaign directory that already holds one. */
export class CampaignExistsError extends SweepError {
  constructor(dir: string) {
    super("AJ_ERR_SWEEP_CAMPAIGN_EXISTS", "usage", `'${dir}' already holds a sweep (campaign.json); continue it with agentjet sweep --resume ${dir}, or pick another --campaign-dir`);
  }
}

/** `--resume` or `report` was pointed at a directory without a readable campaign.json. */
export class NoCampaignError extends SweepError {
  constructor(dir: string, why: string) {
    super("AJ_ERR_SWEEP_NO_CAMPAIGN", "not-found", `'${dir}' is not a sweep campaign directory: ${why}`);
  }
}

/** Another live sweep process owns the campaign. */
export class CampaignInUseError extends SweepError {
  constructor(dir: string, pid: number) {
    super("AJ_ERR_SWEEP_IN_USE", "failure", `the sweep in '${dir}' is running (process ${pid}); stop it first, or wait for it to end`);
  }
}
