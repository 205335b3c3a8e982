import { findCommand, matchBrace } from "./latex-commands.ts";

/**
 * Strips the presentation around an answer (math delimiters, `\text{}`, bold, units of display, a
 * trailing period) and leaves the mathematical content. Both gold and predicted answers pass through it.
 */
export function normalizeAnswer(raw: string): string {
  // Golds repeat across a group's responses, and one verification normalises its texts more than once.
  const cached = CACHE.get(raw);
  if (cached !== undefined) return cached;
  const out = normalizeUncached(raw);
  if (CACHE.size >= CACHE_SIZE) CACHE.clear();
  CACHE.set(raw, out);
  return out;
}

const CACHE_SIZE = 1024;
const CACHE = new Map<string, string>();

function normalizeUncached(raw: string): string {
  // A response serialised twice writes `\\frac`; a double backslash before a letter is one backslash.
  // The Unicode minus sign (U+2212) is a minus: `−5` is -5, never 5 and never unreadable.
  let s = raw.trim().replace(/\\\\(?=[A-Za-z])/g, "\\").replace(/\u2212/g, "-");
  s = s.replace(/\*\*|__/g, "");
  s = stripDelimiters(s);
  s = s.replace(TRAILING_TEXT_UNIT, (unit) => (isUnitText(unit) ? "" : unit));
  s = unwrapCommand(s, TEXT_COMMANDS);
  s = s
    .replace(/\\(?:displaystyle|textstyle|left|right|bigl|bigr|Bigl|Bigr|big|Big|middle)(?![A-Za-z])/g, "")
    .replace(/(\d)\s*(?:\{\s*,\s*\}|,\s*\\!|\\!\s*,|\\,|\\ |~)\s*(?=\d{3}(?!\d))/g, "$1")
    .replace(/\\q?quad(?![A-Za-z])/g, " , ")
    .replace(/(?<!\\)\\[,;:! ]|~/g, " ")
    .replace(/\\(?:d|t|c)frac/g, "\\frac")
    .replace(/\\frac\s*(\d)\s*(\d)/g, "\\frac{$1}{$2}")
    .replace(/\\frac\s*(\d)\s*(?=\{)/g, "\\frac{$1}")
    .replace(/\\sqrt\s*(\d)/g, "\\sqrt{$1}")
    .replace(/\^\s*\{?\s*\\circ\s*\}?|°/g, "")
    .replace(/\\%|%/g, "")
    .replace(/\\\$/g, "")
    .replace(/\\(?:geq|geqslant|ge)(?![A-Za-z])|>=|≥/g, "\\ge ")
    .replace(/\\(?:leq|leqslant|le)(?![A-Za-z])|<=|≤/g, "\\le ")
    .replace(/\\(?:neq|ne)(?![A-Za-z])|!=|≠/g, "\\ne ")
    .replace(/\\lt(?![A-Za-z])/g, "<")
    .replace(/\\gt(?![A-Za-z])/g, ">");
  // Math delimiters left inside (`\boxed{12 $ and $13}`) are presentation too.
  s = s.replace(/(?<!\\)\$/g, " ").replace(/\s+/g, " ").trim();
  s = s.replace(/[.。]+$/, "").trim();
  s = joinDigitGroups(stripUnitWords(s));
  return stripDelimiters(s);
}

const TEXT_COMMANDS = [
  "\\text", "\\textbf", "\\textnormal", "\\textit", "\\textrm", "\\textsf", "\\mbox", "\\hbox",
  "\\mathbf", "\\mathrm", "\\mathit", "\\mathsf", "\\operatorname", "\\boxed", "\\fbox",
];
/** `5 \text{ meters}`, `3\mathrm{cm}^2`: a unit written as text after the value. */
const TRAILING_TEXT_UNIT =
  /(?<=[\d}.)])\s*\\(?:text|textnormal|textrm|mbox|mathrm)\s*\{\s*[A-Za-z][A-Za-z\s.]*\}(?:\s*\^\s*\{?\d\}?|[²³])?\s*$/;
/** `28 percent`, `7 square units`: words of two letters or more after a value. */
const TRAILING_WORDS = /^(.*[\d}])\s*((?:\b[A-Za-z]{2,}\.?(?:\s*\^\s*\{?\d\}?|[²³])?\s*){1,3})$/;
/** Words that change the value or offer another one: never stripped as units. */
const VALUE_WORDS = new Set(
  ("or and to plus minus times over divided squared cubed root roots factorial pi inf infinity sqrt sin cos tan cot " +
    "sec csc log ln exp mod hundred hundreds thousand thousands million millions billion billions trillion dozen " +
    "half halves third thirds quarter quarters tenths hundredths thousandths not no than less more least most " +
    "about around approximately roughly nearly almost over under above below exactly only at is are was were be " +
    "possible impossible invalid wrong incorrect false undefined none neither nor either if when unless except " +
    "maybe perhaps probably likely ish").split(" "),
);

function isUnitText(s: string): boolean {
  const words = s.replace(/\\[A-Za-z]+/g, " ").toLowerCase().match(/[a-z]+/g) ?? [];
  return !words.some((w) => VALUE_WORDS.has(w));
}

/** Strips unit words after a value (`28 percent` -> `28`) unless one of them is a word of value. */
export function stripUnitWords(s: string): string {
  const m = TRAILING_WORDS.exec(s);
  if (m === null) return s;
  const words = m[2]!.toLowerCase().match(/[a-z]+/g) ?? [];
  if (words.some((w) => VALUE_WORDS.has(w))) return s;
  return m[1]!.trim();
}
const GROUPED = /^(-?)(\\\$)?([1-9]\d{0,2}(?:,\d{3})+|[1-9]\d{0,2}(?: \d{3})+)(\.\d+)?$/;

/** `7,425,000` and `1 000`, when they are the whole answer, are one number, not a list. */
function joinDigitGroups(s: string): string {
  const m = GROUPED.exec(s);
  if (m === null) return s;
  return `${m[1]}${m[3]!.replace(/[, ]/g, "")}${m[4] ?? ""}`;
}

function stripDelimiters(s: string): string {
  let out = s.trim();
  for (;;) {
    const before = out;
    if (out.startsWith("$$") && out.endsWith("$$") && out.length >= 4) out = out.slice(2, -2).trim();
    else if (out.startsWith("$") && out.endsWith("$") && out.length >= 2) out = out.slice(1, -1).trim();
    else if (out.startsWith("\\(") && out.endsWith("\\)")) out = out.slice(2, -2).trim();
    else if (out.startsWith("\\[") && out.endsWith("\\]")) out = out.slice(2, -2).trim();
    out = out.replace(/^\$+|\$+$/g, "").trim();
    if (out === before) return out;
  }
}

/** `\text{33}` -> `33`, for each named command, at any depth. */
function unwrapCommand(s: string, commands: readonly string[]): string {
  let out = s;
  for (let guard = 0; guard < 50; guard++) {
    let changed = false;
    for (const cmd of commands) {
      const idx = findCommand(out, cmd);
      if (idx < 0) continue;
      let j = idx + cmd.length;
      while (out[j] === " ") j++;
      if (out[j] !== "{") {
        out = out.slice(0, idx) + out.slice(idx + cmd.length);
        changed = true;
        continue;
      }
      const close = matchBrace(out, j);
      if (close < 0) continue;
      out = out.slice(0, idx) + out.slice(j + 1, close) + out.slice(close + 1);
      changed = true;
    }
    if (!changed) break;
  }
  return out;
}
