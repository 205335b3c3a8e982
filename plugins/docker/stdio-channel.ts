import { PassThrough, type Duplex } from "node:stream";
import { createInterface } from "node:readline";
import type Docker from "dockerode";
import type { HostOp, Instance } from "../instance.ts";
import { failed, failedWith } from "../outcome.ts";
import { parseReply } from "../parse-reply.ts";
import type { Failure, Outcome } from "../runtime.ts";
import { wasOomKilled, watchExit } from "./container-exit.ts";
import { probeContainer } from "./probe-container.ts";

const STDERR_KEPT = 2_000;
const OUTPUT_CLOSED_GRACE_MS = 1_000;

/** A container that speaks the protocol as JSON lines on its stdin/stdout (attached before it starts). */
export class StdioChannel implements Instance {
  #alive = true;
  #disposed = false;
  #nextId = 1;
  #pending: { id: number; settle: (o: Outcome<unknown>) => void } | undefined;
  #stderr = "";

  private constructor(
    private readonly container: Docker.Container,
    private readonly stream: Duplex,
    private readonly onDisposed: (instance: Instance) => void,
  ) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    container.modem.demuxStream(stream, stdout, stderr);
    stream.on("end", () => {
      stdout.end();
      stderr.end();
      this.#outputClosed();
    });
    stream.on("error", () => undefined);
    stderr.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_KEPT);
    });
    createInterface({ input: stdout, crlfDelay: Infinity }).on("line", (line) => this.#receive(line));
    void watchExit(container).then((failure) => this.#fail(this.#withStderr(failure)));
  }

  static async attach(container: Docker.Container, onDisposed: (instance: Instance) => void): Promise<StdioChannel> {
    const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as Duplex;
    return new StdioChannel(container, stream, onDisposed);
  }

  get alive(): boolean {
    return this.#alive;
  }

  probe(timeoutMs: number): Promise<Outcome<unknown>> {
    return probeContainer(this.container, () => this.call("ping", {}, timeoutMs), () => (this.#alive = false));
  }

  waitReady(timeoutMs: number): Promise<Outcome<unknown>> {
    return this.call("ping", {}, timeoutMs);
  }

  call(op: HostOp, params: unknown, timeoutMs: number): Promise<Outcome<unknown>> {
    if (!this.#alive) return Promise.resolve(failed("crash", "the container is gone"));
    if (this.#pending) return Promise.resolve(failed("protocol", "one request at a time per instance"));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => void this.#timedOut(op, timeoutMs), timeoutMs);
      this.#pending = {
        id,
        settle: (o) => {
          clearTimeout(timer);
          this.#pending = undefined;
          resolve(o);
        },
      };
      this.stream.write(`${JSON.stringify({ id, op, params: params ?? {} })}\n`);
    });
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#fail({ kind: "crash", message: "the instance was disposed" });
    this.stream.destroy();
    await this.container.remove({ force: true }).catch(() => undefined);
    this.onDisposed(this);
  }

  #receive(line: string) {
    const pending = this.#pending;
    if (!pending) {
      this.#fail({ kind: "protocol", message: `unrequested output on stdout: ${line.slice(0, 200)}` });
      void this.dispose();
      return;
    }
    const r = parseReply(line, pending.id);
    if (r.kind === "failed" && r.failure.kind === "protocol") {
      this.#fail(r.failure);
      void this.dispose();
      return;
    }
    pending.settle(r);
  }

  /**
   * The container closed its output: it can answer nothing more. The engine's exit report says why
   * (oom or crash) and usually comes at once; under load it can lag by seconds, so the pending call
   * does not wait for it past a grace period.
   */
  #outputClosed() {
    this.#alive = false;
    if (!this.#pending) return;
    setTimeout(() => this.#fail({ kind: "crash", message: "the container closed its output (it exited)" }), OUTPUT_CLOSED_GRACE_MS).unref();
  }

  /** No reply in time: a `timeout`, unless the kernel already killed the container for memory. */
  async #timedOut(op: HostOp, timeoutMs: number): Promise<void> {
    const oom = await wasOomKilled(this.container);
    this.#fail(
      oom
        ? this.#withStderr({ kind: "oom", message: `killed for exceeding its memory limit (no reply to ${op} within ${timeoutMs} ms)` })
        : { kind: "timeout", message: `no reply to ${op} within ${timeoutMs} ms` },
    );
    await this.dispose();
  }

  /** Ends the instance; the pending call, if any, answers with `failure`. */
  #fail(failure: Failure) {
    this.#alive = false;
    this.#pending?.settle(failedWith(failure));
  }

  #withStderr(failure: Failure): Failure {
    const tail = this.#stderr.trim();
    return tail ? { ...failure, message: `${failure.message}; stderr: ${tail.slice(-500)}` } : failure;
  }
}
