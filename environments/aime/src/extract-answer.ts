import { findBoxed } from "./find-boxed.ts";
import { splitThinking } from "./split-thinking.ts";

export type AnswerSource = "boxed" | "answer-line";

/** Where the final answer of a response was found, as raw text still to be normalised. */
export interface ExtractedAnswer {
  raw: string;
  source: AnswerSource;
  part: "final" | "thinking";
  /** Other boxes joined to the chosen one by "or", "," or "and" (`\boxed{12} or \boxed{13}`): a hedge. */
  rivals: string[];
  /** How many boxes the chosen part holds in all. */
  boxCount: number;
}

/** Boxes closer than this, with only a connector between them, are one hedged statement. */
const CONNECTOR = /^[\s$.,;]*(?:or|and|,|;|\/|\\text\{\s*or\s*\}|\\quad|\\qquad)?[\s$.,;]*$/i;
const ANSWER_LINE =
  /(?:^|[\s*#>])(?:final\s+answer|answer)\s*(?:\*\*|__)?\s*(?:is\s*)?(?:[:：]|\bis\b)\s*(?:\*\*|__)?\s*(.+?)\s*$/i;

/** The last balanced `\boxed{}` of the final part; failing that a final `Answer: ...` line; then the thinking part. */
export function extractAnswer(response: string): ExtractedAnswer | null {
  const parts = splitThinking(response);
  return extractFrom(parts.final, "final") ?? extractFrom(parts.thinking, "thinking");
}

/** The value of an answer line; a repeated label (`Final Answer: The final answer is 33`) is peeled off. */
function readAnswerLine(line: string): string | null {
  let raw: string | null = null;
  let rest = line;
  for (let m = ANSWER_LINE.exec(rest); m?.[1] !== undefined && m[1].trim() !== ""; m = ANSWER_LINE.exec(rest)) {
    raw = m[1];
    rest = m[1];
  }
  if (raw === null) return null;
  // Minerva's closing line: "The final answer is $33$. I hope it is correct." The math span is the answer.
  const math = /^\s*(\$[^$]+\$)/.exec(raw);
  return math?.[1] ?? raw;
}

function extractFrom(text: string, part: "final" | "thinking"): ExtractedAnswer | null {
  const boxes = findBoxed(text);
  const last = boxes.at(-1);
  if (last !== undefined) {
    const rivals: string[] = [];
    for (let i = boxes.length - 2; i >= 0; i--) {
      const prev = boxes[i]!;
      const next = boxes[i + 1]!;
      if (!CONNECTOR.test(text.slice(prev.end, next.start))) break;
      rivals.push(prev.content);
    }
    return { raw: last.content, source: "boxed", part, rivals, boxCount: boxes.length };
  }
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const raw = readAnswerLine(lines[i]!);
    if (raw !== null) return { raw, source: "answer-line", part, rivals: [], boxCount: 0 };
  }
  return null;
}
