import { ENVIRONMENT_FAILURE_KINDS } from "../sdk/failure-kinds.ts";
import type { Driver, HostOp, Instance } from "./instance.ts";
import { failed } from "./outcome.ts";
import { RuntimeClosedError } from "./errors.ts";
import type { Failure, FailureKind, Outcome, RuntimeStats } from "./runtime.ts";

export interface SupervisorOptions {
  driver: Driver;
  maxInstances: number;
  warm: number;
  maxConcurrentStarts: number;
  healthIntervalMs: number;
  callTimeoutMs: number;
}

/**
 * Keeps a pool of instances of one environment: hands them out, takes them back, retires the failed
 * ones (counting the failure) and starts replacements so that `warm` instances stay ready. Idle
 * instances are pinged every `healthIntervalMs`; one that does not answer is replaced. An idle instance
 * is probed again just before it is handed out, so a warm instance killed in between never reaches an
 * episode (nor costs it a retry).
 */
export class Supervisor {
  readonly #o: SupervisorOptions;
  readonly #idle: Instance[] = [];
  readonly #waiters: Array<() => void> = [];
  readonly #startQueue: Array<() => void> = [];
  #live = 0;
  #starting = 0;
  /** Starts made to refill the warm pool, queued or running. */
  #filling = 0;
  #started = 0;
  #replaced = 0;
  #closed = false;
  /** Starts and disposals in flight, which close() waits for so that no sandbox outlives the runtime. */
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #failures = Object.fromEntries(ENVIRONMENT_FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
  readonly #health: NodeJS.Timeout;

  constructor(options: SupervisorOptions) {
    this.#o = options;
    this.#health = setInterval(() => void this.#checkIdle(), options.healthIntervalMs);
    this.#health.unref();
  }

  /** Starts instances until `warm` are idle (or the cap is reached); resolves when those starts end. */
  async fill(): Promise<void> {
    const starts: Array<Promise<void>> = [];
    while (!this.#closed && this.#idle.length + this.#filling < this.#o.warm && this.#live < this.#o.maxInstances) {
      this.#live++;
      this.#filling++;
      starts.push(
        this.#start().then((r) => {
          this.#filling--;
          if (r.kind === "ok") this.#putIdle(r.value);
          else {
            // The failed start frees its slot: an episode waiting at the cap may start one now.
            this.#live--;
            this.#wake();
          }
        }),
      );
    }
    await Promise.all(starts);
  }

  async acquire(): Promise<Outcome<Instance>> {
    for (;;) {
      if (this.#closed) throw new RuntimeClosedError();
      const idle = this.#idle.pop();
      if (idle) {
        const probed = idle.alive ? await idle.probe(this.#o.callTimeoutMs) : failed("crash", "an idle instance died");
        if (probed.kind === "ok" && !this.#closed) {
          void this.fill();
          return { kind: "ok", value: idle };
        }
        if (probed.kind === "ok") this.#retire(idle);
        else this.fail(idle, probed.failure);
        continue;
      }
      if (this.#live < this.#o.maxInstances) {
        this.#live++;
        const r = await this.#start();
        if (r.kind === "failed") this.#live--;
        this.#wake();
        return r;
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Takes an instance back after a clean episode; `reuse` false retires it without counting a failure. */
  release(instance: Instance, reuse: boolean): void {
    if (reuse && instance.alive && !this.#closed) {
      this.#putIdle(instance);
      return;
    }
    this.#retire(instance);
  }

  /** Retires a failed instance and starts its replacement. */
  fail(instance: Instance, failure: Failure): void {
    this.#failures[failure.kind]++;
    this.#replaced++;
    this.#retire(instance);
    void this.fill();
  }

  /** One call on a borrowed instance, for work outside an episode (generate tasks, solve). */
  async callOnce(op: HostOp, params: unknown): Promise<Outcome<unknown>> {
    const acquired = await this.acquire();
    if (acquired.kind === "failed") return acquired;
    const r = await acquired.value.call(op, params, this.#o.callTimeoutMs);
    if (r.kind === "failed") this.fail(acquired.value, r.failure);
    else this.release(acquired.value, true);
    return r;
  }

  stats(): RuntimeStats {
    return {
      live: this.#live,
      idle: this.#idle.length,
      waiting: this.#waiters.length,
      started: this.#started,
      replaced: this.#replaced,
      failures: { ...this.#failures },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#health);
    for (const i of this.#idle.splice(0)) this.#retire(i);
    for (const w of this.#waiters.splice(0)) w();
    for (const s of this.#startQueue.splice(0)) s();
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    await this.#o.driver.close();
  }

  async #start(): Promise<Outcome<Instance>> {
    while (this.#starting >= this.#o.maxConcurrentStarts && !this.#closed) {
      await new Promise<void>((resolve) => this.#startQueue.push(resolve));
    }
    if (this.#closed) return failed("start-failed", "the environment runtime is closed");
    this.#starting++;
    try {
      const r = await this.#track(this.#o.driver.start());
      if (r.kind === "ok") this.#started++;
      else this.#failures["start-failed"]++;
      return r;
    } finally {
      this.#starting--;
      this.#startQueue.shift()?.();
    }
  }

  #putIdle(instance: Instance) {
    if (this.#closed) {
      this.#retire(instance);
      return;
    }
    this.#idle.push(instance);
    this.#wake();
  }

  #retire(instance: Instance) {
    this.#live--;
    void this.#track(instance.dispose());
    this.#wake();
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  #wake() {
    this.#waiters.shift()?.();
  }

  async #checkIdle() {
    const batch = this.#idle.splice(0);
    await Promise.all(
      batch.map(async (instance) => {
        const r = instance.alive
          ? await instance.call("ping", {}, this.#o.callTimeoutMs)
          : failed("crash", "an idle instance died");
        if (r.kind === "ok") this.#putIdle(instance);
        else this.fail(instance, r.failure);
      }),
    );
  }
}
