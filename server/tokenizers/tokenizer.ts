import type { ParsedToolCall } from "./parse-tool-calls.ts";

/** A chat message as the server renders it (after the OpenAI request has been validated). */
export interface ChatTurnMessage {
  role: "system" | "user" | "assistant" | "tool";
  /** Text content; text parts are joined. */
  content: string;
  /** Assistant tool calls, as OpenAI sends them (arguments are a JSON string). */
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  toolCallId?: string;
  name?: string;
}

/**
 * One message of a rendered prompt, with the token ids it rendered to. Tokenizers hand a cached
 * message's segment (or its ids) to every prompt that repeats it: a segment is never written to.
 */
export interface PromptSegment {
  role: ChatTurnMessage["role"];
  /** The message in canonical text form (what `text` matching compares). */
  text: string;
  /**
   * The message's ids: a plain array, or, for a message tokenized on the encode thread, the view of that
   * thread's shared memory it came back in (copying a 4 MB message's million ids into an array held the
   * event loop for tens of milliseconds). `promptIds` joins a prompt's into one array.
   */
  ids: readonly number[] | Int32Array;
}

export interface RenderedPrompt {
  /** The prompt message by message; the prompt is these ids followed by `headerIds`. */
  segments: PromptSegment[];
  /** The generation prompt (e.g. `<|im_start|>assistant\n`), loss mask 0. */
  headerIds: number[];
}

export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: unknown;
}

export interface RenderOptions {
  tools?: readonly ToolDefinition[];
  generated?: ReadonlyMap<string, readonly number[]>;
  templateKwargs?: Readonly<Record<string, unknown>>;
}

/** Tokenizers behind one interface: the embedded model's own and real HF tokenizers with chat templates. */
export interface Tokenizer {
  readonly name: string;
  readonly vocabSize: number;
  /** Ids that end a generation (end-of-turn and end-of-text). */
  readonly stopIds: readonly number[];
  encode(text: string): number[];
  decode(ids: PromptSegment["ids"]): string;
  /** `encode`, made a slice at a time (or on a worker, its ids then as they came back) so that a huge text never holds the event loop. */
  encodeAsync?(text: string): Promise<PromptSegment["ids"]>;
  /** One id's raw bytes (a byte token is part of a character); tokenizers without it give decode's UTF-8. */
  tokenBytes?(id: number): number[];
  /**
   * Renders a conversation with the chat template. A segment is rendered for each message, so that an
   * assistant message whose text equals an earlier generation can be spliced with that generation's
   * exact ids (`generated`), never re-tokenized. Text from messages and tool definitions is tokenized
   * as text: only the template makes control tokens. `templateKwargs` are extra template variables
   * (`enable_thinking`); a template that has none ignores them.
   */
  renderChat(messages: readonly ChatTurnMessage[], options?: RenderOptions): RenderedPrompt;
  /**
   * The same rendering, made a slice at a time so that a huge prompt never holds the event loop for more
   * than a few milliseconds. Tokenizers that are cheap enough leave it out.
   */
  renderChatAsync?(messages: readonly ChatTurnMessage[], options?: RenderOptions): Promise<RenderedPrompt>;
  /** Parses a generation's text into content and tool calls (the model's tool-call syntax). */
  parseAssistant(text: string): { content: string; toolCalls: ParsedToolCall[] };
}
