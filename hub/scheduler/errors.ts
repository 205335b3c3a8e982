import { AgentJetError, withCode } from "../../errors/index.ts";
import { noWeightMessage } from "../../server/config/index.ts";

/** Errors of the scheduler. Expected outcomes (a lost client, a failed episode) are values, not these. */
export class SchedulerError extends AgentJetError {}

export class NoTasksError extends SchedulerError {
  constructor(env: string, split: string) {
    super("AJ_ERR_SCHEDULER_NO_TASKS", `environment '${env}' has no tasks in split '${split}'`);
  }
}

export class UnknownRoleTargetError extends SchedulerError {
  constructor(env: string, role: string, target: string) {
    super(
      "AJ_ERR_SCHEDULER_ROLE_TARGET",
      `environment '${env}' maps role '${role}' to '${target}', which is neither a policy, a frozen model nor "@builtin"`,
    );
  }
}

export class UnmappedRoleError extends SchedulerError {
  constructor(env: string, role: string) {
    super("AJ_ERR_SCHEDULER_UNMAPPED_ROLE", `environment '${env}' has agents with role '${role}', which the run config does not map`);
  }
}

export class NoWeightError extends SchedulerError {
  constructor(step: number) {
    super("AJ_ERR_SCHEDULER_NO_WEIGHT", noWeightMessage(step));
  }
}

export class BadStateError extends withCode(SchedulerError, "AJ_ERR_SCHEDULER_STATE") {}
