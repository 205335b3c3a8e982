import { createRandom, randomInt, seedFor } from "./random.ts";
import type { Task } from "../../../sdk/env/protocol.ts";

export interface ArithProblem {
  a: number;
  b: number;
  op: "+" | "-" | "*";
  answer: number;
}

/** `small`: answers 0-9 (a tiny model learns these first); `large`: two-digit operands and answers. */
export type ArithLevel = "small" | "large";

export function levelOfSplit(split: string): ArithLevel {
  return split.endsWith("-two-digit") ? "large" : "small";
}

export function drawProblem(rand: () => number, level: ArithLevel): ArithProblem {
  for (;;) {
    const op = (["+", "-", "*"] as const)[randomInt(rand, 0, 2)]!;
    const max = level === "small" ? 9 : 99;
    const a = randomInt(rand, 0, max);
    const b = randomInt(rand, 0, level === "small" || op !== "*" ? max : 9);
    const answer = op === "+" ? a + b : op === "-" ? a - b : a * b;
    const lo = level === "small" ? 0 : 10;
    const hi = level === "small" ? 9 : 99;
    if (answer >= lo && answer <= hi) return { a, b, op, answer };
  }
}

export function generateArithTasks(split: string, seed: number, count: number): Task[] {
  const rand = createRandom(seedFor(seed, split));
  const level = levelOfSplit(split);
  return Array.from({ length: count }, (_, i) => {
    const p = drawProblem(rand, level);
    return { id: `${split}-${seed}-${i}`, split, data: p };
  });
}

export function promptOf(p: ArithProblem): string {
  return `${p.a}${p.op}${p.b}=`;
}

/** Checks untrusted task data (it crosses the sandbox boundary as JSON). */
export function readProblem(data: unknown): ArithProblem | null {
  const d = data as Partial<ArithProblem> | null;
  if (typeof d !== "object" || d === null) return null;
  const { a, b, op, answer } = d;
  if (![a, b, answer].every(Number.isInteger) || (op !== "+" && op !== "-" && op !== "*")) return null;
  return { a: a!, b: b!, op, answer: answer! };
}
