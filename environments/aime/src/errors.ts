/** A task whose data is not `{ problem, answer }`: the dataset is broken, not the agent's answer. */
export class InvalidAimeTaskError extends Error {
  readonly code = "AJ_ERR_AIME_INVALID_TASK";
  constructor(taskId: string, why: string) {
    super(`task ${taskId}: ${why}`);
    this.name = "InvalidAimeTaskError";
  }
}
