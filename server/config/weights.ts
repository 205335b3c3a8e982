/**
 * An environment's mixing weight over optimizer steps (`environments[].weight`): a number, or a schedule
 * from `start` to `end`. The config checks it (`RunConfigSchema`); the scheduler mixes batches with it
 * (`hub/scheduler/mixing.ts`).
 */

export interface WeightSchedule {
  kind: "constant" | "linear" | "cosine";
  start: number;
  end: number;
  /** Step at which the end share is reached (and kept). */
  steps: number;
}

export type Weight = number | WeightSchedule;

export function weightAt(weight: Weight, step: number): number {
  if (typeof weight === "number") return weight;
  const t = Math.min(Math.max(step / weight.steps, 0), 1);
  switch (weight.kind) {
    case "constant":
      return weight.start;
    case "linear":
      return weight.start + (weight.end - weight.start) * t;
    case "cosine":
      return weight.end + ((weight.start - weight.end) * (1 + Math.cos(Math.PI * t))) / 2;
  }
}

/**
 * The first step at which every weight is 0, or null when there is none. A batch planned there would
 * hold no group; schedules move monotonically from start to end, so steps 0 and each schedule's end are
 * the only places to look.
 */
export function allZeroStep(weights: readonly Weight[]): number | null {
  const ends = weights.flatMap((w) => (typeof w === "number" ? [] : [w.steps]));
  for (const step of [0, ...ends].sort((a, b) => a - b)) {
    if (weights.every((w) => weightAt(w, step) <= 0)) return step;
  }
  return null;
}

/** Why weights whose every share is 0 from `step` on are refused (the config's issue, the scheduler's error). */
export function noWeightMessage(step: number): string {
  return `every environment's weight is 0 ${step === 0 ? "at step 0" : `from step ${step} on`}: no batch could hold a task there (the run would never step); give an environment a positive weight at that step`;
}
