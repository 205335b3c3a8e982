import type { ServerResponse } from "node:http";

/**
 * A server-sent-events response written as it is made. The response is taken over on the first write
 * (`onOpen`: fastify's hijack, for a fastify route), so that errors before it still answer as ordinary JSON errors.
 */
export class SseWriter {
  private opened = false;
  constructor(
    private readonly raw: ServerResponse,
    private readonly onOpen?: () => void,
  ) {}

  get started(): boolean {
    return this.opened;
  }

  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.onOpen?.();
    this.raw.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  }

  /** Writes one event: `data: <json>` (and `event: <name>` when given). */
  send(data: unknown, event?: string): void {
    this.open();
    const raw = this.raw;
    if (raw.destroyed || raw.writableEnded) return;
    raw.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  }

  end(): void {
    this.open();
    if (!this.raw.writableEnded) this.raw.end();
  }
}
