/** A math span of a response: `$...$`, `$$...$$`, `\(...\)` or `\[...\]`, with its content. */
export interface MathSpan {
  content: string;
  display: boolean;
  start: number;
  end: number;
}

/**
 * The response's math spans in order. Inline spans (`$`, `\(`) end on their line; display spans may
 * cross lines. An unclosed `$` is a currency sign, not an opener. `\$` is never a delimiter.
 */
export function scanMathSpans(text: string): MathSpan[] {
  const spans: MathSpan[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "\\") {
      const next = text[i + 1];
      if (next === "[" || next === "(") {
        const close = next === "[" ? "\\]" : "\\)";
        const end = text.indexOf(close, i + 2);
        const inline = next === "(";
        if (end >= 0 && !(inline && text.slice(i + 2, end).includes("\n"))) {
          spans.push({ content: text.slice(i + 2, end), display: !inline, start: i, end: end + 2 });
          i = end + 2;
          continue;
        }
      }
      i += 2;
      continue;
    }
    if (ch === "$") {
      const display = text[i + 1] === "$";
      const open = display ? 2 : 1;
      const end = findClosingDollar(text, i + open, display);
      if (end >= 0) {
        spans.push({ content: text.slice(i + open, end), display, start: i, end: end + open });
        i = end + open;
        continue;
      }
      i += open;
      continue;
    }
    i++;
  }
  return spans;
}

function findClosingDollar(text: string, from: number, display: boolean): number {
  for (let k = from; k < text.length; k++) {
    const ch = text[k];
    if (ch === "\\") {
      k++;
      continue;
    }
    if (!display && ch === "\n") return -1;
    if (ch !== "$") continue;
    if (!display) return k > from ? k : -1;
    if (text[k + 1] === "$") return k;
  }
  return -1;
}

/** A phrase that announces the final answer: "Final Answer:", "the answer is", "Answer \[ 9 \]". */
export interface AnswerMarker {
  /** Where the phrase starts. */
  start: number;
  /** Where the announced value starts. */
  valueStart: number;
  /** A label form (`Answer:`, `Final Answer:`), which may be followed by a whole sentence. */
  colon: boolean;
}

const MARKER = /(?:final\s+answer|\banswer)(?:\s*(?:\*\*|__|\}|#+))*\s*(?:(?:is|would\s+be|will\s+be|should\s+be)\b|[:：=]|(?=\$|\\\[|\\\(|\\boxed|\\fbox|\n|\*\*))/gi;

/** Every answer-announcing phrase in `text`, in order. */
export function scanAnswerMarkers(text: string): AnswerMarker[] {
  const out: AnswerMarker[] = [];
  MARKER.lastIndex = 0;
  for (let m = MARKER.exec(text); m !== null; m = MARKER.exec(text)) {
    out.push({ start: m.index, valueStart: m.index + m[0].length, colon: /[:：]\s*(?:\*\*|__)?$|^final/i.test(m[0]) });
    if (m[0].length === 0) MARKER.lastIndex++;
  }
  return out;
}

/** A number written in prose (`34`, `-5` or `−5` with the Unicode minus, `2/3`, `7,425,000`, `**73**`), not part of a word. */
export interface ProseNumber {
  text: string;
  start: number;
  end: number;
}

const PROSE_NUMBER = /(?<![\w.,\\^_{])[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\/\d+)?(?![\w^_]|[.,]\d)/g;

/** Numbers in the prose parts of `text` (outside `spans`). */
export function scanProseNumbers(text: string, spans: readonly MathSpan[]): ProseNumber[] {
  const out: ProseNumber[] = [];
  PROSE_NUMBER.lastIndex = 0;
  let s = 0;
  for (let m = PROSE_NUMBER.exec(text); m !== null; m = PROSE_NUMBER.exec(text)) {
    while (s < spans.length && spans[s]!.end <= m.index) s++;
    const span = spans[s];
    if (span !== undefined && span.start <= m.index) continue;
    out.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  }
  return out;
}
