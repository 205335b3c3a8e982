import { loadavg } from "node:os";
import { createJsonMask, toJsonGrammar } from "../server/openai/index.ts";
import { createTokenizer } from "../server/tokenizers/index.ts";
// what no entry offers: the forced tool call's mask, and the scan the server does not use
import { createToolCallMask, type MaskScan, warmMaskTables } from "../server/openai/json-mask.ts";
import { type Bench, fmt, median } from "./harness.ts";

/**
 * Structured output on in-process engines: the token mask's time per generated token, and its longest
 * step (what holds the event loop), for a forced tool call, a JSON-schema answer and free text in a JSON
 * string, each token drawn at random among the ids the mask allows (as an untrained model would draw them). The two scans of a step side by side, alternating run by run:
 * every piece fed on its own (how the mask tried them until 2026-12-07) and the pieces walked in sorted
 * order, sharing common prefixes (`server/openai/sorted-pieces.ts`, what the server uses).
 */

const TOOL = toJsonGrammar({ type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] }, "tools");
const SCHEMA = toJsonGrammar(
  { type: "object", properties: { vote: { enum: ["p1", "p2", "p3"] }, reason: { type: "string", maxLength: 24 }, confidence: { type: "number" } }, required: ["vote", "reason", "confidence"] },
  "response_format",
);

/** A string with no maximum length: most of a generation is spent inside it. */
const FREE_TEXT = toJsonGrammar({ type: "object", properties: { note: { type: "string" } }, required: ["note"] }, "response_format");

type Tok = ReturnType<typeof createTokenizer>;
type Shape = "tool call" | "json_schema" | "free text";

/** One generation under a fresh mask, seeded: its tokens, the mask's milliseconds per token and its longest step. */
function generate(tok: Tok, shape: Shape, scan: MaskScan, seed: number): { tokens: number; msPerToken: number; longestMs: number } {
  const mask =
    shape === "tool call"
      ? createToolCallMask(tok, [{ name: "add", grammar: TOOL }], scan)
      : createJsonMask(tok, shape === "json_schema" ? SCHEMA : FREE_TEXT, scan);
  let x = seed + 1;
  const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const out = new Uint8Array(tok.vocabSize);
  let tokens = 0;
  let longestMs = 0;
  const t0 = performance.now();
  // free text runs to its budget: 40 tokens (each of Qwen3's pieces on its own takes about 0.1 s a step there)
  for (let left = shape === "free text" ? 40 : 120; left > 0; left--) {
    out.fill(0);
    const s0 = performance.now();
    mask.allowed(out, left);
    longestMs = Math.max(longestMs, performance.now() - s0);
    const ids: number[] = [];
    for (let id = 0; id < out.length; id++) if (out[id] === 1) ids.push(id);
    const id = ids[Math.floor(rand() * ids.length)]!;
    tokens++;
    if (tok.stopIds.includes(id)) break;
    mask.accept(id);
  }
  return { tokens, msPerToken: (performance.now() - t0) / tokens, longestMs };
}

export const bench: Bench = {
  name: "mask",
  async run({ quick, log }) {
    const runs = quick ? 2 : 6;
    const rows: Array<Array<string | number>> = [];
    const notes: string[] = [];
    for (const name of ["embedded", "qwen3"] as const) {
      const tok = createTokenizer(name);
      // the per-tokenizer tables (pieces, sorted order, literal costs, pieces a string takes whole) are
      // built once, outside the timing, as the server builds them at start-up
      warmMaskTables(tok);
      generate(tok, "tool call", "each", 0);
      for (const shape of ["tool call", "json_schema", "free text"] as const) {
        const each: number[] = [];
        const sorted: number[] = [];
        const longest: number[] = [];
        const tokens: number[] = [];
        for (let r = 0; r < runs; r++) {
          const order: MaskScan[] = r % 2 === 0 ? ["each", "sorted"] : ["sorted", "each"];
          for (const scan of order) {
            const g = generate(tok, shape, scan, r);
            (scan === "each" ? each : sorted).push(g.msPerToken);
            if (scan === "sorted") {
              tokens.push(g.tokens);
              longest.push(g.longestMs);
            }
          }
        }
        log(`${name} ${shape}: each ${fmt(median(each))} ms/token, sorted ${fmt(median(sorted))}`);
        rows.push([name, shape, fmt(median(tokens)), fmt(median(each)), fmt(median(sorted)), `${fmt(median(each) / median(sorted))}x`, fmt(median(longest))]);
      }
    }
    notes.push(
      `${runs} generations per row and scan, seeded, the scans alternating; medians of milliseconds per token and of each sorted-walk generation's longest step (ms; a collection or compilation may fall in one). Load average at the end: ${fmt(loadavg()[0]!)} on this machine's CPUs.`,
      "Inside a string, the sorted walk allows at once every piece a string takes whole (no quote, backslash or control character) that fits its maximum length and leaves room to finish, and walks only the other pieces (`json-mask.ts`, `stringPiecesOf`).",
    );
    return [{ title: "Token mask time per generated token (ms)", columns: ["tokenizer", "output", "tokens (median)", "each piece on its own", "sorted walk", "ratio", "longest step, sorted walk"], rows, notes }];
  },
};
