import type { Task } from "../env/protocol.ts";

/**
 * What a rubric's `{{task}}` and `{{reference}}` read from a task: `data.question` / `data.prompt` /
 * `data.problem` (else the data as JSON), and `data.reference` / `data.answer` (else empty).
 */
export function taskSlots(task: Task): { task: string; reference: string } {
  const d = task.data && typeof task.data === "object" ? (task.data as Record<string, unknown>) : {};
  const pick = (...keys: string[]) => keys.map((k) => d[k]).find((v) => typeof v === "string" || typeof v === "number");
  const text = pick("question", "prompt", "problem");
  const reference = pick("reference", "answer", "solution");
  return {
    task: text === undefined ? JSON.stringify(task.data ?? null) : String(text),
    reference: reference === undefined ? "" : String(reference),
  };
}
