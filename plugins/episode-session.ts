import { type ResetRequest, type StepRequest, type Turn, TurnSchema } from "../sdk/env/protocol.ts";
import type { HostOp, Instance } from "./instance.ts";
import { failed, failedWith } from "./outcome.ts";
import type { EpisodeSession, Failure, Outcome } from "./runtime.ts";
import type { Supervisor } from "./supervisor.ts";

/**
 * One episode on one instance. The first failure ends the episode: the instance is retired (and
 * replaced by the supervisor), and every later call answers with that same failure.
 */
export class SupervisedSession implements EpisodeSession {
  #failure: Failure | undefined;
  #closed = false;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly instance: Instance,
    private readonly timeoutMs: number,
    private readonly reusable: boolean,
  ) {}

  reset(input: ResetRequest): Promise<Outcome<Turn>> {
    return this.#turn("reset", input);
  }

  step(input: StepRequest): Promise<Outcome<Turn>> {
    return this.#turn("step", input);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#failure) return;
    const r = await this.instance.call("close", {}, this.timeoutMs);
    if (r.kind === "failed") this.supervisor.fail(this.instance, r.failure);
    else this.supervisor.release(this.instance, this.reusable);
  }

  async #turn(op: HostOp, params: unknown): Promise<Outcome<Turn>> {
    if (this.#failure) return failedWith(this.#failure);
    if (this.#closed) return failed("protocol", "the episode session is closed");
    const r = await this.instance.call(op, params, this.timeoutMs);
    if (r.kind === "failed") return this.#fail(r.failure);
    const turn = TurnSchema.safeParse(r.value);
    if (!turn.success) {
      const fields = turn.error.issues.map((i) => i.path.join(".") || "(root)").join(", ");
      return this.#fail({ kind: "protocol", message: `${op} returned something that is not a Turn (at ${fields})` });
    }
    return { kind: "ok", value: turn.data };
  }

  #fail(failure: Failure): Outcome<Turn> {
    this.#failure = failure;
    this.supervisor.fail(this.instance, failure);
    return failedWith(failure);
  }
}
