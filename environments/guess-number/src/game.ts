import type { Task } from "../../../sdk/env/protocol.ts";
import { createRandom, randomInt, seedFor } from "./random.ts";

export interface GuessGame {
  secret: number;
  max: number;
  maxTurns: number;
}

/** Secrets 1-9 in `train`/`test` (one character per guess); 1-99 in the `-wide` splits. */
export function generateGuessTasks(split: string, seed: number, count: number): Task[] {
  const rand = createRandom(seedFor(seed, split));
  const wide = split.endsWith("-wide");
  const max = wide ? 99 : 9;
  const maxTurns = wide ? 8 : 5;
  return Array.from({ length: count }, (_, i) => ({
    id: `${split}-${seed}-${i}`,
    split,
    data: { secret: randomInt(rand, 1, max), max, maxTurns } satisfies GuessGame,
  }));
}

export function readGame(data: unknown): GuessGame | null {
  const d = data as Partial<GuessGame> | null;
  if (typeof d !== "object" || d === null) return null;
  const { secret, max, maxTurns } = d;
  if (![secret, max, maxTurns].every(Number.isInteger) || secret! < 1 || secret! > max! || maxTurns! < 1) return null;
  return { secret: secret!, max: max!, maxTurns: maxTurns! };
}

/** A guess is the reply's only number; anything else is malformed. */
export function readGuess(reply: string): number | null {
  const m = /^\s*(\d{1,4})\s*\.?\s*$/.exec(reply);
  return m === null ? null : Number(m[1]);
}

/**
 * A win earns 1 minus 0.1 per extra turn (at least 0.5); a loss earns 0.1 times the share of its
 * replies that were well-formed guesses, so a tiny model gets signal for the format first.
 */
export function rewardOf(won: boolean, turns: number, wellFormed: number): number {
  if (won) return Math.max(0.5, 1 - 0.1 * (turns - 1));
  return turns === 0 ? 0 : Math.round((0.1 * wellFormed * 1000) / turns) / 1000;
}
