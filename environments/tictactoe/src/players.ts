import { type Board, freeCells, type Mark, other, winnerOf, winningMove } from "./board.ts";
import { randomInt } from "./random.ts";

/** The built-in opponent: win if it can, block if it must, else the centre, else a seeded random cell. */
export function ruleMove(b: Board, me: Mark, rand: () => number): number {
  const win = winningMove(b, me);
  if (win !== null) return win;
  const block = winningMove(b, other(me));
  if (block !== null) return block;
  if (b[4] === null) return 4;
  const free = freeCells(b);
  return free[randomInt(rand, 0, free.length - 1)]!;
}

/** Perfect play by minimax (quickest win, slowest loss): the reference agent. */
export function bestMove(b: Board, me: Mark): number {
  let best = -Infinity;
  let move = freeCells(b)[0] ?? 0;
  for (const i of freeCells(b)) {
    const next = [...b];
    next[i] = me;
    const score = -negamax(next, other(me), 1);
    if (score > best) {
      best = score;
      move = i;
    }
  }
  return move;
}

/** Scores by position and depth; positions repeat across calls, so they are remembered (the game is tiny). */
const memo = new Map<string, number>();

function negamax(b: Board, toMove: Mark, depth: number): number {
  const key = `${b.map((c) => c ?? ".").join("")}${toMove}${depth}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const score = searchScore(b, toMove, depth);
  memo.set(key, score);
  return score;
}

function searchScore(b: Board, toMove: Mark, depth: number): number {
  const w = winnerOf(b);
  if (w !== null) return w === toMove ? 10 - depth : depth - 10;
  const free = freeCells(b);
  if (free.length === 0) return 0;
  let best = -Infinity;
  for (const i of free) {
    b[i] = toMove;
    best = Math.max(best, -negamax(b, other(toMove), depth + 1));
    b[i] = null;
  }
  return best;
}
