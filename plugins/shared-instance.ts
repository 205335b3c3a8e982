import type { BatchCall, Task } from "../sdk/env/index.ts";
import { BatchReplySchema } from "../sdk/env/schemas.ts";
import type { Driver, HostOp, Instance } from "./instance.ts";
import { failed, failedWith, ok } from "./outcome.ts";
import { thrown } from "./parse-reply.ts";
import type { Outcome } from "./runtime.ts";

type LaneOp = BatchCall["op"];

interface Queued {
  episode: string;
  /** An op outside episodes (`tasks`, `solve`): sent alone, in its turn. */
  direct?: HostOp;
  op: LaneOp;
  params: unknown;
  timeoutMs: number;
  settle: (o: Outcome<unknown>) => void;
}

/**
 * One sandbox instance serving several episodes at once, each through its own lane. The calls the lanes
 * make while a message is out are sent together as the next `batch` (one message, one reply), so the
 * protocol's round trips are shared instead of paid per call; a reset names a task the batch already
 * carries by index, so a group on one task sends it once. A call the plugin throws on fails its lane
 * alone; a crash, timeout or OOM of the instance fails every lane on it.
 */
class SharedInstance {
  #queue: Queued[] = [];
  #sending = false;
  #scheduled = false;
  #nextLane = 1;
  lanes = 0;

  constructor(readonly real: Instance) {}

  openLane(onGone: () => void): Lane {
    this.lanes++;
    return new Lane(this, String(this.#nextLane++), onGone);
  }

  enqueue(episode: string, op: LaneOp, params: unknown, timeoutMs: number, direct?: HostOp): Promise<Outcome<unknown>> {
    if (!this.real.alive) return Promise.resolve(failed("crash", "the instance is gone"));
    return new Promise((settle) => {
      this.#queue.push({ episode, op, params, timeoutMs, settle, ...(direct ? { direct } : {}) });
      this.#schedule();
    });
  }

  #schedule() {
    if (this.#sending || this.#scheduled) return;
    this.#scheduled = true;
    // After the current turn of the event loop: the episodes a reply just woke have made their next calls by then.
    setImmediate(() => {
      this.#scheduled = false;
      void this.#send();
    });
  }

  async #send() {
    if (this.#sending || this.#queue.length === 0) return;
    this.#sending = true;
    const first = this.#queue[0]!;
    if (first.direct) {
      this.#queue.shift();
      first.settle(await this.real.call(first.direct, first.params, first.timeoutMs));
      this.#sending = false;
      this.#schedule();
      return;
    }
    const end = this.#queue.findIndex((q) => q.direct !== undefined);
    const batch = this.#queue.splice(0, end < 0 ? this.#queue.length : end);
    const tasks: Task[] = [];
    const taskIndex = new Map<Task, number>();
    const calls: BatchCall[] = batch.map((q) => {
      const params = (q.params ?? {}) as Record<string, unknown>;
      if (q.op === "reset" && params.task && typeof params.task === "object") {
        const task = params.task as Task;
        let i = taskIndex.get(task);
        if (i === undefined) {
          i = tasks.push(task) - 1;
          taskIndex.set(task, i);
        }
        const { task: _sent, ...rest } = params;
        return { episode: q.episode, op: q.op, params: rest, taskIndex: i };
      }
      return { episode: q.episode, op: q.op, params };
    });
    const timeoutMs = Math.max(...batch.map((q) => q.timeoutMs));
    const r = await this.real.call("batch", { tasks, calls }, timeoutMs);
    this.#sending = false;
    if (r.kind === "failed") {
      for (const q of batch) q.settle(failedWith(r.failure));
      for (const q of this.#queue.splice(0)) q.settle(failedWith(r.failure));
      return;
    }
    const replies = BatchReplySchema.safeParse(r.value);
    if (!replies.success || replies.data.length !== batch.length) {
      for (const q of batch) q.settle(failed("protocol", "batch returned something that is not one reply per call"));
      return;
    }
    batch.forEach((q, i) => {
      const reply = replies.data[i]!;
      q.settle(reply.ok ? ok(reply.result) : thrown(reply.error.message));
    });
    this.#schedule();
  }
}

/** One episode's share of a `SharedInstance`, handed to the supervisor as an instance of its own. */
class Lane implements Instance {
  #disposed = false;

  constructor(
    private readonly shared: SharedInstance,
    private readonly key: string,
    private readonly onGone: () => void,
  ) {}

  get alive(): boolean {
    return !this.#disposed && this.shared.real.alive;
  }

  call(op: HostOp, params: unknown, timeoutMs: number): Promise<Outcome<unknown>> {
    if (this.#disposed) return Promise.resolve(failed("crash", "the instance was disposed"));
    if (op === "reset" || op === "step" || op === "close" || op === "ping") return this.shared.enqueue(this.key, op, params, timeoutMs);
    return this.shared.enqueue(this.key, "ping", params, timeoutMs, op);
  }

  probe(timeoutMs: number): Promise<Outcome<unknown>> {
    return this.call("ping", {}, timeoutMs);
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.shared.lanes--;
    this.onGone();
    if (this.shared.lanes === 0) {
      await this.shared.real.dispose();
      return;
    }
    // Drops this lane's episode state; the instance serves the other lanes on.
    if (this.shared.real.alive) await this.shared.enqueue(this.key, "close", {}, 5_000);
  }
}

/**
 * A driver whose instances each serve up to `perInstance` episodes at once: a start opens a lane on a
 * live instance with room, and starts a real instance only when none has.
 */
export function shareInstances(driver: Driver, perInstance: number): Driver {
  const shared = new Set<SharedInstance>();
  return {
    async start() {
      for (const s of shared) {
        if (!s.real.alive) shared.delete(s);
        else if (s.lanes < perInstance) return ok(s.openLane(() => s.lanes === 0 && shared.delete(s)));
      }
      const r = await driver.start();
      if (r.kind === "failed") return r;
      const s = new SharedInstance(r.value);
      shared.add(s);
      return ok(s.openLane(() => s.lanes === 0 && shared.delete(s)));
    },
    close: () => driver.close(),
  };
}
