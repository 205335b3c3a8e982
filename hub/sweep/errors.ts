import { AgentJetError, withCode } from "../../errors/index.ts";

/** Errors of `agentjet sweep`. A run that fails is an outcome recorded in campaign.json, never one of these; each code's exit code is in errors/codes.json. */
export class SweepError extends AgentJetError {}

/** The sweep file is not YAML, or does not match the sweep schema. */
export class InvalidSweepFileError extends SweepError {
  constructor(source: string, details: string, options?: { cause?: unknown }) {
    super("AJ_ERR_SWEEP_INVALID_FILE", `${source}: ${details}`, options);
  }
}

/** A sweep file, its base config or a campaign's file could not be read. */
export class SweepFileNotFoundError extends SweepError {
  constructor(path: string, why: string) {
    super("AJ_ERR_SWEEP_NOT_FOUND", `cannot read '${path}': ${why}`);
  }
}

/** A dotted path (a parameter or an override) names no run config field. */
export class UnknownFieldError extends SweepError {
  readonly field: string;
  constructor(field: string, why: string) {
    super("AJ_ERR_SWEEP_UNKNOWN_FIELD", `unknown run config field '${field}': ${why} (every field: agentjet config docs)`);
    this.field = field;
  }
}

/** The search has nothing to run (an empty value list, no parameters and no seeds), or a value spec is unusable. */
export class EmptySearchError extends withCode(SweepError, "AJ_ERR_SWEEP_EMPTY") {}

/** An expanded run's config fails the run config's schema. */
export class InvalidRunConfigError extends SweepError {
  constructor(runId: string, details: string) {
    super("AJ_ERR_SWEEP_INVALID_CONFIG", `run ${runId}: the expanded config is not a valid run config: ${details}`);
  }
}

/** A new sweep was pointed at a campaign directory that already holds one. */
export class CampaignExistsError extends SweepError {
  constructor(dir: string) {
    super("AJ_ERR_SWEEP_CAMPAIGN_EXISTS", `'${dir}' already holds a sweep (campaign.json); continue it with agentjet sweep --resume ${dir}, or pick another --campaign-dir`);
  }
}

/** `--resume` or `report` was pointed at a directory without a readable campaign.json. */
export class NoCampaignError extends SweepError {
  constructor(dir: string, why: string) {
    super("AJ_ERR_SWEEP_NO_CAMPAIGN", `'${dir}' is not a sweep campaign directory: ${why}`);
  }
}

/** Another live sweep process owns the campaign. */
export class CampaignInUseError extends SweepError {
  constructor(dir: string, pid: number) {
    super("AJ_ERR_SWEEP_IN_USE", `the sweep in '${dir}' is running (process ${pid}); stop it first, or wait for it to end`);
  }
}
