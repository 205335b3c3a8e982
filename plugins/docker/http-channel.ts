import type Docker from "dockerode";
import type { HostOp, Instance } from "../instance.ts";
import { failed, failedWith } from "../outcome.ts";
import { parseReply } from "../parse-reply.ts";
import type { Failure, Outcome } from "../runtime.ts";
import { watchExit } from "./container-exit.ts";
import { probeContainer } from "./probe-container.ts";
import { INTERNAL_NETWORK } from "./network.ts";

/**
 * A container that serves the protocol over HTTP on `docker.port` (POST / with a request, a reply in the
 * body). It sits on the internal network, so the host reaches it by its address there.
 */
export class HttpChannel implements Instance {
  #alive = true;
  #disposed = false;
  #nextId = 1;
  #url: string | undefined;
  #exited: Failure | undefined;

  constructor(
    private readonly container: Docker.Container,
    private readonly port: number,
    private readonly onDisposed: (instance: Instance) => void,
  ) {
    void watchExit(container).then((f) => {
      this.#exited = f;
      this.#alive = false;
    });
  }

  get alive(): boolean {
    return this.#alive;
  }

  probe(timeoutMs: number): Promise<Outcome<unknown>> {
    return probeContainer(this.container, () => this.call("ping", {}, timeoutMs), () => (this.#alive = false));
  }

  async waitReady(timeoutMs: number): Promise<Outcome<unknown>> {
    const deadline = Date.now() + timeoutMs;
    const info = await this.container.inspect();
    const ip = info.NetworkSettings.Networks[INTERNAL_NETWORK]?.IPAddress;
    if (!ip) return failed("start-failed", `the container has no address on ${INTERNAL_NETWORK}`);
    this.#url = `http://${ip}:${this.port}/`;
    let last: Outcome<unknown> = failed("start-failed", "never answered");
    while (Date.now() < deadline) {
      if (this.#exited) return failedWith(this.#exited);
      last = await this.call("ping", {}, Math.min(1_000, timeoutMs));
      if (last.kind === "ok") return last;
      this.#alive = true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return last;
  }

  async call(op: HostOp, params: unknown, timeoutMs: number): Promise<Outcome<unknown>> {
    if (!this.#alive || !this.#url) return failed("crash", "the container is gone");
    const id = this.#nextId++;
    let text: string;
    try {
      const res = await fetch(this.#url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id, op, params: params ?? {} }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      this.#alive = false;
      if (this.#exited) return failedWith(this.#exited);
      const timedOut = err instanceof Error && err.name === "TimeoutError";
      return timedOut ? failed("timeout", `no reply to ${op} within ${timeoutMs} ms`) : failed("crash", String(err));
    }
    const r = parseReply(text, id);
    if (r.kind === "failed" && r.failure.kind === "protocol") this.#alive = false;
    return r;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#alive = false;
    await this.container.remove({ force: true }).catch(() => undefined);
    this.onDisposed(this);
  }
}
