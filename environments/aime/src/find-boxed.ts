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
  let i = 0;
  while (i < text.length) {
    const at = nextCommand(text, i);
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

function nextCommand(text: string, from: number): { index: number; length: number } | null {
  let best: { index: number; length: number } | null = null;
  for (const cmd of COMMANDS) {
    const idx = findCommand(text, cmd, from);
    if (idx >= 0 && (best === null || idx < best.index)) best = { index: idx, length: cmd.length };
  }
  return best;
}

function readBoxAt(text: string, start: number, cmdLength: number): BoxedSpan | null {
  let j = start + cmdLength;
  while (text[j] === " ") j++;
  if (text[j] !== "{") {
    // `\boxed 42`: the argument runs to the next whitespace or `$`.
    const m = /^[^\s$]+/.exec(text.slice(j));
    if (j === start + cmdLength || m === null) return null;
    return { content: m[0], start, end: j + m[0].length };
  }
  const close = matchBrace(text, j);
  return close < 0 ? null : { content: text.slice(j + 1, close), start, end: close + 1 };
}
