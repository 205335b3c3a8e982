import type { FastifyReply } from "fastify";

/**
 * A server-sent-events response written as it is made. The reply is taken over from fastify on the
 * first write, so that errors before it still answer as ordinary JSON errors.
 */
export class SseWriter {
  private opened = false;
  constructor(private readonly reply: FastifyReply) {}

  get started(): boolean {
    return this.opened;
  }

  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  }

  /** Writes one event: `data: <json>` (and `event: <name>` when given). */
  send(data: unknown, event?: string): void {
    this.open();
    const raw = this.reply.raw;
    if (raw.destroyed || raw.writableEnded) return;
    raw.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  }

  end(): void {
    this.open();
    if (!this.reply.raw.writableEnded) this.reply.raw.end();
  }
}
