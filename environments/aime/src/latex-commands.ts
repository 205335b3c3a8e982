/** Finding a LaTeX command in text and the brace group of its argument. */

/** Index of `cmd` (`\boxed`, `\text`, ...) at or after `from`, skipping longer commands that start with it (`\boxedx`); -1 if none. */
export function findCommand(s: string, cmd: string, from = 0): number {
  let idx = s.indexOf(cmd, from);
  while (idx >= 0 && /[A-Za-z]/.test(s[idx + cmd.length] ?? "")) idx = s.indexOf(cmd, idx + 1);
  return idx;
}

/** Index of the `}` matching the `{` at `open`, or -1; an escaped brace (`\{`) does not count. */
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
