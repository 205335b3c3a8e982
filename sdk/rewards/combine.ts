import type { Combine } from "./spec.ts";

/**
 * Turns one agent's reward parts (`env` is the environment's own reward) into its reward, clipped to the
 * declared range. sum: the weighted sum (unnamed parts weigh 1, `env` 0 unless named). gate: the range's
 * minimum while the gate part is below its threshold, else the `then` part.
 */
export function combineParts(values: Readonly<Record<string, number>>, combine: Combine, range: { min: number; max: number }): number {
  let r: number;
  if (combine.kind === "sum") {
    r = 0;
    for (const [name, v] of Object.entries(values)) r += v * (combine.weights[name] ?? (name === "env" ? 0 : 1));
  } else {
    const gate = values[combine.gate];
    r = gate === undefined || gate < combine.threshold ? range.min : (values[combine.then] ?? range.min);
  }
  return Math.min(range.max, Math.max(range.min, r));
}
