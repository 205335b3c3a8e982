import type { Task } from "../../../sdk/env/protocol.ts";
import { AimeDataError } from "./errors.ts";

/** Which record fields hold the problem, the answer and the id. */
export interface FieldMapping {
  problem: string;
  answer: string;
  id?: string;
  /** A prefix for generated ids when there is no id field (`aime-2024` -> `aime-2024-1`). */
  idPrefix: string;
}

/** Turns raw records into tasks of `split`. Records missing a problem or an answer are an error, by line. */
export function mapRecords(records: readonly Record<string, unknown>[], fields: FieldMapping, split: string): Task[] {
  const seen = new Set<string>();
  return records.map((r, i) => {
    const problem = r[fields.problem];
    const answer = r[fields.answer];
    if (typeof problem !== "string" || problem.trim() === "") {
      throw new AimeDataError(`record ${i + 1}: no text in field "${fields.problem}"`);
    }
    if (typeof answer !== "string" && typeof answer !== "number" && typeof answer !== "bigint") {
      throw new AimeDataError(`record ${i + 1}: no answer in field "${fields.answer}"`);
    }
    const rawId = fields.id === undefined ? undefined : r[fields.id];
    const id = rawId === undefined || rawId === null || rawId === "" ? `${fields.idPrefix}-${i + 1}` : String(rawId);
    if (seen.has(id)) throw new AimeDataError(`record ${i + 1}: duplicate id "${id}"`);
    seen.add(id);
    return { id, split, data: { problem, answer: String(answer).trim() } };
  });
}
