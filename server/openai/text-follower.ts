import { readToolCallBlock } from "../tokenizers/tool-call-block.ts";
import type { Tokenizer } from "../tokenizers/tokenizer.ts";
import type { CompletionSink } from "./completion.ts";
import type { StreamedToolCall } from "./finish-choice.ts";
import { type ToolBlockText, visibleText } from "./split-text.ts";
import { newToolCallId } from "./tool-call-id.ts";

/**
 * Decodes a generation token by token (ids that end inside a UTF-8 character wait for the rest), notices
 * stop strings as soon as they appear, and streams what can be shown. Text is taken only up to a
 * character that decodes whole, so what was shown is always a prefix of the whole output's decoding.
 *
 * A tool call streams once its block has given its `name` and begun an object or array of `arguments`:
 * its arguments go out as the model writes them, which is the finished call's `arguments` text. Calls
 * stream in block order; a block that cannot stream (not JSON, `arguments` before `name` or neither an
 * object nor an array) stops the streaming of calls, and it and the calls after it come whole at the end. A streamed
 * block that never ends as a call (cut by max_tokens, or broken after it began) has been sent as far as it
 * went; the finished reply gives its text as content, as one that is not streamed does.
 */
export class TextFollower {
  text = "";
  private pending: number[] = [];
  private shown = { reasoning: "", content: "" };
  /** The longest stop string's length: how far back of the new text a stop string may begin. */
  private readonly longest: number;
  /** Tool calls streamed so far, in the order they began (their position in the stream), with the arguments sent. */
  private readonly calls: Array<StreamedToolCall & { sent: string }> = [];
  /** Blocks before this one are handled whole. */
  private nextBlock = 0;
  private callsHalted = false;
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly opts: { stops: readonly string[]; toolSyntax: boolean; parallelToolCalls: boolean },
    private readonly index: number,
    private readonly sink: CompletionSink | undefined,
  ) {
    this.longest = opts.stops.reduce((m, s) => Math.max(m, s.length), 0);
  }

  /** The tool calls this stream began, with their ids (the finished choice gives them the same). */
  get streamedCalls(): readonly StreamedToolCall[] {
    return this.calls;
  }

  /** Takes one token; true when a stop string has appeared (generation may end). */
  push(id: number): boolean {
    if (this.tokenizer.stopIds.includes(id)) return false;
    this.pending.push(id);
    const piece = this.tokenizer.decode(this.pending);
    // Bytes that are no character (a model's noise) wait with the rest until a whole character follows:
    // given up on after 4 tokens, they were decoded apart from the bytes after them, and the streamed text
    // could hold another count of U+FFFD than the output's (2 of 8 streams of an untrained model at T=2).
    if (piece.endsWith("\uFFFD")) return false;
    const before = this.text.length;
    this.text += piece;
    this.pending = [];
    if (this.sink) {
      const visible = visibleText(this.text, this.opts);
      this.show(visible);
      if (visible.blocks.length > this.nextBlock && !this.callsHalted) this.streamCalls(visible.blocks);
    }
    const from = Math.max(0, before - this.longest);
    return this.opts.stops.some((s) => s.length > 0 && this.text.indexOf(s, from) !== -1);
  }

  /** Sends what the final choice adds to what was shown (a tool call's rest goes with the stream's finish). */
  finish(choice: { content: string | null; reasoning: string | null }): void {
    if (!this.sink) return;
    this.show({ reasoning: choice.reasoning ?? "", content: choice.content ?? "" });
  }

  private show(v: { reasoning: string; content: string }): void {
    if (v.reasoning.length > this.shown.reasoning.length && v.reasoning.startsWith(this.shown.reasoning)) {
      this.sink!.reasoning(this.index, v.reasoning.slice(this.shown.reasoning.length));
      this.shown.reasoning = v.reasoning;
    }
    if (v.content.length > this.shown.content.length && v.content.startsWith(this.shown.content)) {
      this.sink!.content(this.index, v.content.slice(this.shown.content.length), null);
      this.shown.content = v.content;
    }
  }

  private streamCalls(blocks: readonly ToolBlockText[]): void {
    for (; this.nextBlock < blocks.length; this.nextBlock++) {
      const block = this.nextBlock;
      const { text, closed } = blocks[block]!;
      const read = readToolCallBlock(text);
      if (read.broken) {
        this.callsHalted = true;
        return;
      }
      let at = this.calls.findIndex((c) => c.block === block);
      if (at === -1) {
        const startable = read.name !== null && read.name.length > 0 && read.args?.kind === "container";
        if ((block > 0 && !this.opts.parallelToolCalls) || (read.args !== null && !startable) || (closed && !startable)) {
          this.callsHalted = true;
          return;
        }
        if (!startable) return;
        at = this.calls.push({ block, id: newToolCallId(), sent: "" }) - 1;
        this.sink!.toolCallStart(this.index, at, this.calls[at]!.id, read.name!);
      }
      const call = this.calls[at]!;
      const args = read.args!;
      const written = text.slice(args.start, args.end ?? text.length);
      if (written.length > call.sent.length) {
        this.sink!.toolCallArguments(this.index, at, written.slice(call.sent.length));
        call.sent = written;
      }
      if (closed && !read.closed) {
        this.callsHalted = true;
        return;
      }
      if (!closed) return;
    }
  }
}
