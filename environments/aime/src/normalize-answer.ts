/**
 * Strips the presentation around an answer (math delimiters, `\text{}`, bold, units of display, a
 * trailing period) and leaves the mathematical content. Both gold and predicted answers pass through it.
 */
export function normalizeAnswer(raw: string): string {
  let s = raw.trim();
  s = s.replace(/\*\*|__/g, "");
  s = stripDelimiters(s);
  s = unwrapCommand(s, ["\\text", "\\textbf", "\\mathbf", "\\mathrm", "\\textrm", "\\mathit", "\\operatorname", "\\boxed", "\\fbox"]);
  s = s
    .replace(/\\(?:displaystyle|left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![A-Za-z])/g, "")
    .replace(/\\[,;:! ]|~/g, " ")
    .replace(/\\(?:d|t)frac/g, "\\frac")
    .replace(/\^\s*\{?\s*\\circ\s*\}?|°/g, "")
    .replace(/\\%|%/g, "")
    .replace(/\\\$/g, "");
  s = s.replace(/\s+/g, " ").trim();
  s = s.replace(/[.。]+$/, "").trim();
  return stripDelimiters(s);
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

function findCommand(s: string, cmd: string): number {
  let idx = s.indexOf(cmd);
  while (idx >= 0 && /[A-Za-z]/.test(s[idx + cmd.length] ?? "")) idx = s.indexOf(cmd, idx + 1);
  return idx;
}

/** Index of the `}` matching the `{` at `open`, or -1. */
export function matchBrace(s: string, open: number): number {
  let depth = 0;
  for (let k = open; k < s.length; k++) {
    const ch = s[k];
    if (ch === "\\") {
      k++;
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}") {
      depth--;
      if (depth === 0) return k;
    }
  }
  return -1;
}
