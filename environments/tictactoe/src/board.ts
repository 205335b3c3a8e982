export type Mark = "x" | "o";
export type Cell = Mark | null;
export type Board = Cell[];

const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
] as const;

export function emptyBoard(): Board {
  return Array.from({ length: 9 }, () => null);
}

export function other(m: Mark): Mark {
  return m === "x" ? "o" : "x";
}

export function winnerOf(b: Board): Mark | null {
  for (const [i, j, k] of LINES) {
    const c = b[i];
    if (c != null && c === b[j] && c === b[k]) return c;
  }
  return null;
}

export function freeCells(b: Board): number[] {
  return b.flatMap((c, i) => (c === null ? [i] : []));
}

/** `x.o/.x./...`: rows top to bottom, cells numbered 1-9 left to right. */
export function renderBoard(b: Board): string {
  const cell = (i: number): string => b[i] ?? ".";
  return [0, 3, 6].map((r) => cell(r) + cell(r + 1) + cell(r + 2)).join("/");
}

export function parseBoard(text: string): Board | null {
  const m = /([xo.]{3})\/([xo.]{3})\/([xo.]{3})/.exec(text);
  if (m === null) return null;
  return (m[1]! + m[2]! + m[3]!).split("").map((c) => (c === "." ? null : (c as Mark)));
}

/** A move is one cell number 1-9 and nothing else; returns the 0-based index. */
export function readMove(reply: string): number | null {
  const m = /^\s*([1-9])\s*\.?\s*$/.exec(reply);
  return m === null ? null : Number(m[1]) - 1;
}

/** The move after which a completed line for `me` appears, if any. */
export function winningMove(b: Board, me: Mark): number | null {
  for (const i of freeCells(b)) {
    const next = [...b];
    next[i] = me;
    if (winnerOf(next) === me) return i;
  }
  return null;
}
