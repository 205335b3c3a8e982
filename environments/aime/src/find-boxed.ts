import { findCommand, matchBrace } from "./latex-commands.ts";

/** One `\boxed{...}` (or `\fbox{...}`) found in a text, with its balanced content. */
export interface BoxedSpan {
  content: string;
  start: number;
  end: number;
}

const COMMANDS = ["\\boxed", "\\fbox"];

/**
 * Every balanced `\boxed{...}` / `\fbox{...}` in order, including the brace-less `\boxed 5` form.
 * Boxes nested inside another box are not reported separately; the outer one counts.
 */
export function findBoxed(text: string): BoxedSpan[] {
  const spans: BoxedSpan[] = [];
  // The next occurrence of each command, searched again only once the scan has passed it: re-searching
  // every command from every box made a reply of many boxes (a degenerate repetition) quadratic.
  const next = COMMANDS.map(() => -2);
  let i = 0;
  while (i < text.length) {
    const at = nextCommand(text, i, next);
    if (at === null) break;
    const span = readBoxAt(text, at.index, at.length);
    if (span === null) {
      i = at.index + at.length;
      continue;
    }
    spans.push(span);
    i = span.end;
  }
  return spans;
}

function nextCommand(text: string, from: number, next: number[]): { index: number; length: number } | null {
  let best: { index: number; length: number } | null = null;
  for (let c = 0; c < COMMANDS.length; c++) {
    const cmd = COMMANDS[c]!;
    if (next[c] !== -1 && next[c]! < from) next[c] = findCommand(text, cmd, from);
    const idx = next[c]!;
    if (idx >= 0 && (best === null || idx < best.index)) best = { index: idx, length: cmd.length };
  }
  return best;
}

/** The argument of a brace-less `\boxed 42`: up to the next whitespace or `$`. */
const BARE_ARGUMENT = /[^\s$]+/y;

function readBoxAt(text: string, start: number, cmdLength: number): BoxedSpan | null {
  let j = start + cmdLength;
  while (text[j] === " ") j++;
  if (text[j] !== "{") {
    // `\boxed 42`: the argument runs to the next whitespace or `$`.
    if (j === start + cmdLength) return null;
    BARE_ARGUMENT.lastIndex = j;
    const m = BARE_ARGUMENT.exec(text);
    if (m === null) return null;
    return { content: m[0], start, end: j + m[0].length };
  }
  const close = matchBrace(text, j);
  return close < 0 ? null : { content: text.slice(j + 1, close), start, end: close + 1 };
}
