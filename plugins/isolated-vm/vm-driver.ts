import { MessageChannel, type MessagePort } from "node:worker_threads";
import type { Piscina } from "piscina";
import type { Manifest } from "../../sdk/env/index.ts";
import type { Driver, HostOp, Instance } from "../instance.ts";
import { failed } from "../outcome.ts";
import { parseReply } from "../parse-reply.ts";
import type { Outcome } from "../runtime.ts";
import { acquirePool, releasePool } from "./vm-pool.ts";
import type { PortReply, PortRequest, StartResult, StartTask } from "./vm-worker.ts";

/** Extra time the host waits beyond a call's limit before it gives up on the worker itself. */
const HOST_GRACE_MS = 2_000;

export async function createVmDriver(manifest: Manifest, bundlePath: string): Promise<Driver> {
  const pool = await acquirePool();
  const instances = new Set<VmInstance>();
  let closed = false;
  return {
    async start() {
      const { port1, port2 } = new MessageChannel();
      const task: StartTask = {
        bundlePath,
        memoryMb: manifest.limits.memoryMb,
        startTimeoutMs: manifest.limits.startTimeoutMs,
        port: port2,
      };
      let result: StartResult;
      try {
        result = (await pool.run(task, { transferList: [port2] })) as StartResult;
      } catch (err) {
        port1.close();
        return failed("start-failed", err instanceof Error ? err.message : String(err));
      }
      if (!result.ok) {
        port1.close();
        return failed("start-failed", `${result.kind}: ${result.message}`);
      }
      const instance = new VmInstance(port1, () => instances.delete(instance));
      instances.add(instance);
      return { kind: "ok", value: instance };
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...instances].map((i) => i.dispose()));
      await releasePool();
    },
  };
}

class VmInstance implements Instance {
  #alive = true;
  #disposed = false;
  #nextId = 1;
  #pending = new Map<number, (o: Outcome<unknown>) => void>();

  constructor(
    private readonly port: MessagePort,
    private readonly onGone: () => void,
  ) {
    port.on("message", (reply: PortReply) => this.#receive(reply));
    port.on("close", () => this.#gone("the isolate's worker went away"));
  }

  get alive(): boolean {
    return this.#alive;
  }

  probe(timeoutMs: number): Promise<Outcome<unknown>> {
    return this.call("ping", {}, timeoutMs);
  }

  call(op: HostOp, params: unknown, timeoutMs: number): Promise<Outcome<unknown>> {
    if (!this.#alive) return Promise.resolve(failed("crash", "the instance is gone"));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve(failed("timeout", `no reply within ${timeoutMs} ms`));
        void this.dispose();
      }, timeoutMs + HOST_GRACE_MS);
      this.#pending.set(id, (o) => {
        clearTimeout(timer);
        resolve(o);
      });
      const request: PortRequest = { id, json: JSON.stringify({ id, op, params: params ?? {} }), timeoutMs };
      this.port.postMessage(request);
    });
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#gone("the instance was disposed");
    const request: PortRequest = { dispose: true };
    try {
      this.port.postMessage(request);
    } finally {
      this.port.close();
      this.onGone();
    }
  }

  #receive(reply: PortReply) {
    const settle = this.#pending.get(reply.id);
    if (!settle) return;
    this.#pending.delete(reply.id);
    if (!reply.ok) {
      this.#alive = false;
      settle(failed(reply.kind, reply.message));
      return;
    }
    settle(parseReply(reply.json, reply.id));
  }

  #gone(message: string) {
    this.#alive = false;
    for (const settle of this.#pending.values()) settle(failed("crash", message));
    this.#pending.clear();
  }
}
