import type { Task } from "../../../sdk/env/protocol.ts";
import { InvalidAimeTaskError } from "./errors.ts";
import type { VerifyMode } from "./verify.ts";

/** What one AIME task carries: the problem text, its gold answer, and how to compare answers. */
export interface AimeTaskData {
  problem: string;
  answer: string;
  mode: VerifyMode;
}

/** Hand-checked rather than zod so the isolate bundle stays small. */
export function readTaskData(task: Task): AimeTaskData {
  const d = task.data as Record<string, unknown> | null;
  if (typeof d !== "object" || d === null) throw new InvalidAimeTaskError(task.id, "data is not an object");
  const { problem, answer, mode } = d;
  if (typeof problem !== "string" || problem.trim() === "") throw new InvalidAimeTaskError(task.id, "no problem text");
  if (typeof answer !== "string" && typeof answer !== "number") throw new InvalidAimeTaskError(task.id, "no answer");
  if (mode !== undefined && mode !== "integer" && mode !== "math") throw new InvalidAimeTaskError(task.id, `unknown mode ${String(mode)}`);
  return { problem, answer: String(answer), mode: mode ?? "integer" };
}
