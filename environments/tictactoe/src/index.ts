// Type-only imports from the SDK: an installed plugin lives outside this repository, and types leave no import behind.
import type { EnvironmentDefinition, EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { Task, Turn } from "../../../sdk/env/protocol.ts";
import { type Board, emptyBoard, freeCells, type Mark, other, parseBoard, readMove, renderBoard, winnerOf } from "./board.ts";
import { bestMove, ruleMove } from "./players.ts";
import { createRandom, randomInt, seedFor } from "./random.ts";

const SEATS: readonly Mark[] = ["x", "o"];
const REWARD = { win: 1, draw: 0.5, loss: 0.2, forfeit: 0 } as const;

/** A task is an opening: zero or one pair of random first moves, so that games differ by task. */
interface Opening {
  moves: number[];
}

function readOpening(data: unknown): Opening | null {
  const moves = (data as { moves?: unknown } | null)?.moves;
  if (!Array.isArray(moves) || moves.length % 2 !== 0) return null;
  if (!moves.every((m) => Number.isInteger(m) && m >= 0 && m < 9) || new Set(moves).size !== moves.length) return null;
  return { moves };
}

function generateTasks({ split, seed, count }: { split: string; seed: number; count: number }): Task[] {
  const rand = createRandom(seedFor(seed, split));
  return Array.from({ length: count }, (_, i) => {
    const moves: number[] = [];
    if (rand() < 0.5) {
      const first = randomInt(rand, 0, 8);
      const rest = [0, 1, 2, 3, 4, 5, 6, 7, 8].filter((c) => c !== first);
      moves.push(first, rest[randomInt(rand, 0, 7)]!);
    }
    return { id: `${split}-${seed}-${i}`, split, data: { moves } satisfies Opening };
  });
}

function createEpisode(): EpisodeDynamics {
  let board: Board = emptyBoard();
  let toMove: Mark = "x";
  let builtin = new Set<string>();
  let rand = createRandom(0);
  let finished: Turn | null = null;

  const end = (rewards: Record<Mark, number>, info: Record<string, unknown>): Turn => {
    finished = { observations: {}, done: true, rewards, info: { board: renderBoard(board), ...info } };
    return finished;
  };
  /** Plays built-in seats until a trained seat must move or the game is over. */
  const advance = (): Turn => {
    for (;;) {
      const w = winnerOf(board);
      if (w !== null) return end({ [w]: REWARD.win, [other(w)]: REWARD.loss } as Record<Mark, number>, { winner: w });
      if (freeCells(board).length === 0) return end({ x: REWARD.draw, o: REWARD.draw }, { winner: null });
      if (!builtin.has(toMove)) {
        const content = `${renderBoard(board)} you ${toMove}, move 1-9`;
        return { observations: { [toMove]: { messages: [{ role: "user", content }] } }, done: false };
      }
      board[ruleMove(board, toMove, rand)] = toMove;
      toMove = other(toMove);
    }
  };

  return {
    reset({ task, seed, builtinAgents }) {
      board = emptyBoard();
      toMove = "x";
      builtin = new Set(builtinAgents);
      rand = createRandom(seed);
      finished = null;
      const opening = readOpening(task.data);
      if (opening === null) return end({ x: 0, o: 0 }, { error: "invalid task data" });
      for (const m of opening.moves) {
        board[m] = toMove;
        toMove = other(toMove);
      }
      return advance();
    },
    step({ actions }) {
      if (finished !== null) return finished;
      const move = readMove(actions[toMove] ?? "");
      if (move === null || board[move] !== null) {
        const why = move === null ? "malformed move" : "cell taken";
        return end({ [toMove]: REWARD.forfeit, [other(toMove)]: REWARD.win } as Record<Mark, number>, {
          winner: other(toMove),
          forfeit: toMove,
          error: why,
        });
      }
      board[move] = toMove;
      toMove = other(toMove);
      return advance();
    },
  };
}

export const environment: EnvironmentDefinition = {
  createEpisode,
  generateTasks,
  solve({ agent, messages }) {
    const last = [...messages].reverse().find((m) => m.role === "user");
    const board = last === undefined ? null : parseBoard(last.content);
    const me = SEATS.find((s) => s === agent);
    if (board === null || me === undefined || freeCells(board).length === 0) return "";
    return String(bestMove(board, me) + 1);
  },
};
