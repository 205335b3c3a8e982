import type { Task } from "../../../sdk/env/protocol.ts";
import { evaluateExpression } from "./expression.ts";
import { createRandom, randomInt, seedFor } from "./random.ts";

export interface CountdownProblem {
  numbers: number[];
  target: number;
  /** One expression that reaches the target (what the generator built). */
  solution: string;
}

/** `train`/`test`: two numbers; the `-hard` splits: three or four. */
export function sizeOfSplit(split: string, rand: () => number): number {
  return split.endsWith("-hard") ? randomInt(rand, 3, 4) : 2;
}

export function drawProblem(rand: () => number, size: number): CountdownProblem {
  for (;;) {
    const numbers = Array.from({ length: size }, () => randomInt(rand, 1, 9));
    let expr = String(numbers[0]);
    for (let i = 1; i < size; i++) {
      const op = ["+", "-", "*", "/"][randomInt(rand, 0, 3)]!;
      const operand = String(numbers[i]);
      expr = i === 1 ? `${expr}${op}${operand}` : `(${expr})${op}${operand}`;
    }
    const v = evaluateExpression(expr)?.value;
    if (v && v.den === 1 && v.num >= 1 && v.num <= 99) {
      return { numbers: shuffle(numbers, rand), target: v.num, solution: expr };
    }
  }
}

function shuffle<T>(xs: T[], rand: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(rand, 0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export function generateCountdownTasks(split: string, seed: number, count: number): Task[] {
  const rand = createRandom(seedFor(seed, split));
  return Array.from({ length: count }, (_, i) => ({
    id: `${split}-${seed}-${i}`,
    split,
    data: drawProblem(rand, sizeOfSplit(split, rand)),
  }));
}

export function promptOf(p: CountdownProblem): string {
  return `${p.numbers.join(" ")} -> ${p.target}`;
}

export function readProblem(data: unknown): CountdownProblem | null {
  const d = data as Partial<CountdownProblem> | null;
  if (typeof d !== "object" || d === null) return null;
  const { numbers, target, solution } = d;
  if (!Array.isArray(numbers) || !numbers.every(Number.isInteger) || !Number.isInteger(target)) return null;
  return { numbers, target: target!, solution: typeof solution === "string" ? solution : "" };
}
