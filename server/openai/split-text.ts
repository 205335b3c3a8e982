const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";
const TOOL_OPEN = "<tool_call>";
const TOOL_CLOSE = "</tool_call>";

/** The length of the longest suffix of `text` that is a proper prefix of `token` (text that may become it). */
function partialSuffix(text: string, token: string): number {
  for (let k = Math.min(token.length - 1, text.length); k > 0; k--) {
    if (text.endsWith(token.slice(0, k))) return k;
  }
  return 0;
}

/** A generation's text split into a leading `<think>` block and the rest. */
export function splitThink(text: string): { reasoning: string | null; rest: string } {
  const lead = text.trimStart();
  if (!lead.startsWith(THINK_OPEN)) return { reasoning: null, rest: text };
  const inner = lead.slice(THINK_OPEN.length);
  const close = inner.indexOf(THINK_CLOSE);
  if (close === -1) return { reasoning: inner.trim(), rest: "" };
  return { reasoning: inner.slice(0, close).trim(), rest: inner.slice(close + THINK_CLOSE.length).trimStart() };
}

/** A `<tool_call>` block of a generation so far: its text between the tags, and whether its `</tool_call>` came. */
export interface ToolBlockText {
  text: string;
  closed: boolean;
}

export interface VisibleText {
  reasoning: string;
  content: string;
  /** The `<tool_call>` blocks so far, when tools are parsed (the last one's text without what may become its `</tool_call>`). */
  blocks: ToolBlockText[];
}

/** The `<tool_call>` blocks of `region`, each closed by the first `</tool_call>` after it (as the finished reply reads them). */
function toolBlocks(region: string): ToolBlockText[] {
  const blocks: ToolBlockText[] = [];
  for (let at = region.indexOf(TOOL_OPEN); at !== -1; ) {
    const from = at + TOOL_OPEN.length;
    const close = region.indexOf(TOOL_CLOSE, from);
    if (close === -1) {
      const text = region.slice(from);
      blocks.push({ text: text.slice(0, text.length - partialSuffix(text, TOOL_CLOSE)), closed: false });
      break;
    }
    blocks.push({ text: region.slice(from, close), closed: true });
    at = region.indexOf(TOOL_OPEN, close + TOOL_CLOSE.length);
  }
  return blocks;
}

/**
 * What of a generation so far can be shown without being taken back later: text that may still turn
 * into a stop string, a `</think>`, a `<tool_call>` (when tools are parsed), or trailing whitespace that
 * trimming may remove, is held back. The final content and reasoning always start with what this shows;
 * a tool call's arguments, once begun, grow only at their end.
 */
export function visibleText(text: string, opts: { stops: readonly string[]; toolSyntax: boolean }): VisibleText {
  let t = text;
  for (const s of opts.stops) {
    if (s.length === 0) continue;
    const at = t.indexOf(s);
    if (at !== -1) t = t.slice(0, at);
  }
  let hold = 0;
  for (const s of opts.stops) if (s.length > 0) hold = Math.max(hold, partialSuffix(t, s));
  t = t.slice(0, t.length - hold);

  const lead = t.trimStart();
  if (lead.length > 0 && lead.length < THINK_OPEN.length && THINK_OPEN.startsWith(lead)) return { reasoning: "", content: "", blocks: [] };
  let reasoning = "";
  let region = t;
  if (lead.startsWith(THINK_OPEN)) {
    const inner = lead.slice(THINK_OPEN.length);
    const close = inner.indexOf(THINK_CLOSE);
    if (close === -1) {
      reasoning = inner.slice(0, inner.length - partialSuffix(inner, THINK_CLOSE)).trim();
      return { reasoning, content: "", blocks: [] };
    }
    reasoning = inner.slice(0, close).trim();
    region = inner.slice(close + THINK_CLOSE.length).trimStart();
  }
  if (!opts.toolSyntax) return { reasoning, content: region, blocks: [] };
  const open = region.indexOf(TOOL_OPEN);
  const before = open === -1 ? region.slice(0, region.length - partialSuffix(region, TOOL_OPEN)) : region.slice(0, open);
  return { reasoning, content: before.trim(), blocks: open === -1 ? [] : toolBlocks(region) };
}
