import type { Tokenizer } from "../tokenizers/tokenizer.ts";
import type { CompletionSink } from "./completion.ts";
import { visibleText } from "./split-text.ts";

/**
 * Decodes a generation token by token (ids that end inside a UTF-8 character wait for the rest), notices
 * stop strings as soon as they appear, and streams what can be shown. Text is taken only up to a
 * character that decodes whole, so what was shown is always a prefix of the whole output's decoding.
 */
export class TextFollower {
  text = "";
  private pending: number[] = [];
  private shown = { reasoning: "", content: "" };
  /** The longest stop string's length: how far back of the new text a stop string may begin. */
  private readonly longest: number;
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly opts: { stops: readonly string[]; toolSyntax: boolean },
    private readonly index: number,
    private readonly sink: CompletionSink | undefined,
  ) {
    this.longest = opts.stops.reduce((m, s) => Math.max(m, s.length), 0);
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
    if (this.sink) this.show(visibleText(this.text, this.opts));
    const from = Math.max(0, before - this.longest);
    return this.opts.stops.some((s) => s.length > 0 && this.text.indexOf(s, from) !== -1);
  }

  /** Sends what the final choice adds to what was shown. */
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
}
