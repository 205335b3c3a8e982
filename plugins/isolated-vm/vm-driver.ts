import type { Manifest } from "../../sdk/env/index.ts";
import type { Driver, HostOp, Instance } from "../instance.ts";
import { failed, failedWith } from "../outcome.ts";
import { parseReply } from "../parse-reply.ts";
import type { Failure, Outcome } from "../runtime.ts";
import type { CallReply } from "./vm-host.ts";
import type { HostedInstance, VmHostProcess } from "./vm-host-process.ts";
import { acquirePool, releasePool } from "./vm-pool.ts";

/** Extra time the parent waits beyond a call's limit before it gives up on the instance (the host's own timer answers first). */
const HOST_GRACE_MS = 2_000;

export async function createVmDriver(manifest: Manifest, bundlePath: string): Promise<Driver> {
  const pool = await acquirePool();
  const instances = new Set<VmInstance>();
  let closed = false;
  return {
    start() {
      const host = pool.host();
      const options = { bundlePath, memoryMb: manifest.limits.memoryMb, startTimeoutMs: manifest.limits.startTimeoutMs };
      return host.start(options, (id) => {
        const instance = new VmInstance(host, id, () => instances.delete(instance));
        instances.add(instance);
        return instance;
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...instances].map((i) => i.dispose()));
      await releasePool();
    },
  };
}

class VmInstance implements Instance, HostedInstance {
  #alive = true;
  #disposed = false;
  #goneBecause = "the instance is gone";
  #nextId = 1;
  #pending = new Map<number, (o: Outcome<unknown>) => void>();

  constructor(
    private readonly host: VmHostProcess,
    private readonly id: number,
    private readonly onGone: () => void,
  ) {}

  get alive(): boolean {
    return this.#alive;
  }

  probe(timeoutMs: number): Promise<Outcome<unknown>> {
    return this.call("ping", {}, timeoutMs);
  }

  call(op: HostOp, params: unknown, timeoutMs: number): Promise<Outcome<unknown>> {
    if (!this.#alive) return Promise.resolve(failed("crash", this.#goneBecause));
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
      this.host.call(this.id, id, JSON.stringify({ id, op, params: params ?? {} }), timeoutMs);
    });
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#end({ kind: "crash", message: "the instance was disposed" });
    this.host.dispose(this.id);
  }

  receive(reply: CallReply): void {
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

  /** The host process died: calls in flight fail as it did (`oom` or `crash`), later ones as `crash`. */
  lost(failure: Failure): void {
    this.#goneBecause = failure.message;
    this.#end(failure);
  }

  #end(failure: Failure) {
    this.#alive = false;
    for (const settle of this.#pending.values()) settle(failedWith(failure));
    this.#pending.clear();
    this.onGone();
  }
}
