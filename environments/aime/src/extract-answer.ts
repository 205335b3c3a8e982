import { type BoxedSpan, findBoxed } from "./find-boxed.ts";
import { type MathSpan, scanAnswerMarkers, scanMathSpans, scanProseNumbers } from "./scan-response.ts";
import { splitThinking } from "./split-thinking.ts";

/** How the answer was found, from the most to the least explicit. */
export type AnswerSource = "boxed" | "answer-line" | "math-span" | "prose";

/** Where the final answer of a response was found, as raw text still to be normalised. */
export interface ExtractedAnswer {
  raw: string;
  source: AnswerSource;
  part: "final" | "thinking";
  /** Answers stated together with the chosen one, in order, the chosen one last (`\boxed{1}, \boxed{2}`). */
  group: string[];
  /** The group was joined by "or": alternatives offered, a hedge unless they agree. */
  alternatives: boolean;
  /** How many boxes the chosen part holds in all. */
  boxCount: number;
}

/** Boxes with only a connector between them are one statement: a list of answers, or a hedge ("or"). */
const CONNECTOR = /^(?:[\s$.,;]|\bor\b|\band\b|\/|\\text\{\s*(?:or|and)\s*\}|\\q?quad\b|\\,|\b[a-z]\s*=)*$/i;
const OR_CONNECTOR = /\bor\b/i;
const PROSE_CONNECTOR = /^[\s,;]*(?:or|and|to|,|;|\\text\{\s*(?:or|and)\s*\})?[\s,;]*$/i;
/** Chat-template tokens: what follows one is not the model's answer. */
const END_OF_TURN = /<\|(?:im_start|im_end|endoftext|eot_id|end)\|>/;
const FILLER = /\s*(?:I hope (?:it|this) is correct|I hope this helps)[\s\S]*$/i;
const LABEL_ONLY = /^\s*(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?'?\s*$/;

/**
 * Extraction by priority, final part (after the last `</think>`) first: the latest final-answer marker
 * (a box, or a phrase such as "Final Answer:" / "the answer is" followed by a value); failing that, the
 * last math span or number of the prose.
 */
export function extractAnswer(response: string): ExtractedAnswer | null {
  const cut = response.includes("<|") ? END_OF_TURN.exec(response) : null;
  const parts = splitThinking(cut === null ? response : response.slice(0, cut.index));
  return extractFrom(parts.final, "final") ?? extractFrom(parts.thinking, "thinking");
}

function extractFrom(text: string, part: "final" | "thinking"): ExtractedAnswer | null {
  const boxes = findBoxed(text);
  const lastBox = boxes.at(-1);
  // Only a marker after the last box can outrank it.
  const marker = lastMarkerValue(text, lastBox?.start ?? 0);
  if (lastBox !== undefined && (marker === null || lastBox.start > marker.start)) {
    return { ...boxGroup(text, boxes), source: "boxed", part, boxCount: boxes.length };
  }
  if (marker !== null) return { raw: marker.raw, source: "answer-line", part, group: [marker.raw], alternatives: false, boxCount: boxes.length };
  // Thinking is scratch work: only a stated answer counts there, not its last number.
  return part === "final" ? lastCandidate(text, part) : null;
}

function boxGroup(text: string, boxes: BoxedSpan[]): { raw: string; group: string[]; alternatives: boolean } {
  const { group, alternatives } = joinedGroup(text, boxes.map((b) => ({ raw: b.content, start: b.start, end: b.end })), CONNECTOR);
  return { raw: boxes.at(-1)!.content, group, alternatives };
}

/** The last value and the ones before it joined to it only by `connector`; "or" among the joins makes them alternatives. */
function joinedGroup(text: string, values: ReadonlyArray<{ raw: string; start: number; end: number }>, connector: RegExp): { group: string[]; alternatives: boolean } {
  const group = [values.at(-1)!.raw];
  let alternatives = false;
  for (let i = values.length - 2; i >= 0; i--) {
    const between = text.slice(values[i]!.end, values[i + 1]!.start);
    if (!connector.test(between)) break;
    if (OR_CONNECTOR.test(between)) alternatives = true;
    group.unshift(values[i]!.raw);
  }
  return { group, alternatives };
}

/** The value announced by the last answer marker whose value looks like an answer. */
function lastMarkerValue(text: string, from: number): { start: number; raw: string } | null {
  const tail = text.slice(from);
  const markers = scanAnswerMarkers(tail);
  for (let i = markers.length - 1; i >= 0; i--) {
    const m = markers[i]!;
    // A value ends where the next marker begins: read to the end of the text, a reply of many markers on
    // one line (degenerate repetition) was quadratic.
    const end = markers[i + 1]?.start ?? tail.length;
    const raw = readMarkerValue(tail.slice(0, end), m.valueStart, m.colon);
    if (raw !== null) return { start: from + m.start, raw };
  }
  return null;
}

function readMarkerValue(text: string, from: number, colon: boolean): string | null {
  let i = from;
  while (i < text.length && /[\s*_:#}]/.test(text[i]!) && text[i] !== "\n") i++;
  let rest = text.slice(i);
  // `## Answer` on its own line: the value is the next line.
  const own = /^\n[\s*_#]*(?=\S)/.exec(rest);
  if (own !== null) rest = rest.slice(own[0].length);
  // `Answer \[ 9 \]` or `Answer:\n$$ 9 $$`: a display block right after the marker is the value.
  const display = /^\s*(\\\[|\$\$)/.exec(rest);
  if (display !== null) {
    const close = display[1] === "\\[" ? "\\]" : "$$";
    const end = rest.indexOf(close, display[0].length);
    if (end >= 0) return usable(rest.slice(display[0].length, end));
  }
  const nl = rest.indexOf("\n");
  rest = nl >= 0 ? rest.slice(0, nl) : rest;
  // `Answer $ 9` with the math never closed on its line: a malformed statement, not a value.
  if (/^(?:\$|\\\()/.test(rest) && scanMathSpans(rest).length === 0) return rest.trim();
  rest = withoutFiller(rest);
  rest = firstSentence(rest).trim();
  if (VALUE_START.test(rest)) return usable(rest);
  // "Final Answer: The largest $n$ is 34" states 34. A phrase that states no readable value ("the answer
  // is not 33", "is in the range 1 to 13") is still the final statement: it is returned whole, to be
  // judged unparseable, rather than letting an earlier number stand in for it.
  const reduced = colon ? reduceSentence(rest) : "";
  return usable(reduced !== "" ? reduced : rest);
}

/** How a stated value begins: a digit, a sign, math, a bracket, bold. */
const VALUE_START = /^(?:["“]|\*\*)?\s*(?:[-+−]?\s*[\d.]|\$|\\|[([{|])/;

function withoutFiller(s: string): string {
  return s.includes("I hope") ? s.replace(FILLER, "") : s;
}

/** Up to the first sentence end outside math (a period then a capital letter). */
function firstSentence(s: string): string {
  const inSpan = insideSpan(scanMathSpans(s));
  const re = /\.\s+(?=[A-Z])/g;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    const at = m.index;
    if (!inSpan(at)) return s.slice(0, at);
  }
  return s;
}

/** Whether a position is inside one of `spans` (in order), for positions asked in increasing order: linear in all. */
function insideSpan(spans: readonly MathSpan[]): (at: number) => boolean {
  let k = 0;
  return (at) => {
    while (k < spans.length && spans[k]!.end <= at) k++;
    return k < spans.length && spans[k]!.start <= at;
  };
}

/** "The largest $n$ is 34" -> "34": a sentence is read after its last verb, if a value follows it. */
function reduceSentence(t: string): string {
  const spans = scanMathSpans(t);
  const inSpan = insideSpan(spans);
  const re = /\b(?:is|are|equals|was|be)\b/g;
  let cut = -1;
  for (let m = re.exec(t); m !== null; m = re.exec(t)) {
    const at = m.index;
    if (!inSpan(at)) cut = at + m[0].length;
  }
  const value = cut >= 0 ? t.slice(cut).trim() : "";
  if (VALUE_START.test(value)) return value;
  // "Jane started 3 hours ago": a sentence with one number and no math states that number.
  const numbers = scanProseNumbers(t, spans);
  return spans.length === 0 && numbers.length === 1 ? numbers[0]!.text : "";
}

/** A marker's value counts only if it holds something an answer is made of (a digit or math). */
function usable(raw: string): string | null {
  const v = stripMathDelimiters(raw)
    .replace(/[\s.]+$/, "")
    .replace(/^\\?["“]\s*|\s*\\?["”]$/g, "")
    .replace(/[\s.]+$/, "")
    .trim();
  if (v === "" || !/[\d\\]/.test(v)) return null;
  return v;
}

function stripMathDelimiters(s: string): string {
  return s.replace(/(?<!\\)\$+/g, " ").replace(/\\[[\]()]/g, " ").trim();
}

/** `-5 + 10` alone on the last line: the whole line is the answer, not its last number. */
function bareFinalExpression(body: string): string | null {
  const line = body.trimEnd().split("\n").at(-1)!.replace(/\*\*/g, "").replace(/[.\s]+$/, "").trim();
  if (!/\d/.test(line) || /\\(?:boxed|fbox)/.test(line) || !/^[-\u2212+*/^()[\]{}\d.,\s=\\A-Za-z_]+$/.test(line)) return null;
  // Words (outside commands) make it a sentence.
  if (/(?<![\\A-Za-z])[A-Za-z]{2,}/.test(line)) return null;
  return line;
}

/** The last math span (not a bare variable) or prose number; a preceding one joined by "or" is a hedge. */
function lastCandidate(text: string, part: "final" | "thinking"): ExtractedAnswer | null {
  const body = withoutFiller(text);
  const bare = bareFinalExpression(body);
  if (bare !== null) return { raw: bare, source: "prose", part, group: [bare], alternatives: false, boxCount: 0 };
  const scanned = scanMathSpans(body);
  const allSpans = scanned.filter((s) => s.content.trim() !== "");
  const spans = allSpans.filter((s) => !LABEL_ONLY.test(s.content));
  const numbers = scanProseNumbers(body, scanned);
  const candidates: Array<{ raw: string; start: number; end: number; source: AnswerSource }> = [
    ...spans.map((s: MathSpan) => ({ raw: s.content.trim(), start: s.start, end: s.end, source: "math-span" as const })),
    ...numbers.map((n) => ({ raw: n.text, start: n.start, end: n.end, source: "prose" as const })),
  ].sort((a, b) => a.start - b.start);
  // A lone letter (`$E$`) is the answer only when nothing else is.
  if (candidates.length === 0 && allSpans.length > 0) {
    const only = allSpans.at(-1)!.content.trim();
    return { raw: only, source: "math-span", part, group: [only], alternatives: false, boxCount: 0 };
  }
  const last = candidates.at(-1);
  if (last === undefined) return null;
  // "between 1 and 33", "3 or 4": values joined only by a connector are stated together.
  const { group, alternatives } = joinedGroup(body, candidates, PROSE_CONNECTOR);
  return { raw: last.raw, source: last.source, part, group, alternatives, boxCount: 0 };
}
