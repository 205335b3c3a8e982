import type { ResetRequest, StepRequest, Turn } from "../sdk/env/index.ts";
import { TurnSchema } from "../sdk/env/schemas.ts";
import { checkTurn } from "./check-turn.ts";
import { explainFailure } from "./explain-failure.ts";
import type { HostOp, Instance } from "./instance.ts";
import { failed, failedWith } from "./outcome.ts";
import type { EpisodeSession, Failure, Outcome } from "./runtime.ts";
import type { Supervisor } from "./supervisor.ts";

export interface SessionOptions {
  timeoutMs: number;
  /** The manifest's memory cap, named in an oom failure's message. */
  memoryMb: number;
  reusable: boolean;
  /** The manifest's reward range: a finished turn's rewards must lie inside it. */
  reward: { min: number; max: number };
  /** The manifest's seats, for tasks that do not name their own. */
  agents: ReadonlyArray<{ id: string }>;
}

/**
 * One episode on one instance. The first failure ends the episode: the instance is retired (and
 * replaced by the supervisor), and every later call answers with that same failure. A finished turn
 * without a finite in-range reward for every seat the episode plays is a `protocol` failure.
 */
export class SupervisedSession implements EpisodeSession {
  #failure: Failure | undefined;
  #closed = false;
  #rewarded: readonly string[] = [];

  constructor(
    private readonly supervisor: Supervisor,
    private readonly instance: Instance,
    private readonly options: SessionOptions,
  ) {}

  reset(input: ResetRequest): Promise<Outcome<Turn>> {
    const builtin = new Set(input.builtinAgents);
    this.#rewarded = (input.task.agents ?? this.options.agents).map((a) => a.id).filter((id) => !builtin.has(id));
    return this.#turn("reset", input);
  }

  step(input: StepRequest): Promise<Outcome<Turn>> {
    return this.#turn("step", input);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#failure) return;
    const r = await this.instance.call("close", {}, this.options.timeoutMs);
    if (r.kind === "failed") this.supervisor.fail(this.instance, r.failure);
    else this.supervisor.release(this.instance, this.options.reusable);
  }

  async #turn(op: HostOp, params: unknown): Promise<Outcome<Turn>> {
    if (this.#failure) return failedWith(this.#failure);
    if (this.#closed) return failed("protocol", "the episode session is closed");
    const r = await this.instance.call(op, params, this.options.timeoutMs);
    if (r.kind === "failed") return this.#fail(explainFailure(r.failure, op, { callTimeoutMs: this.options.timeoutMs, memoryMb: this.options.memoryMb }));
    const turn = TurnSchema.safeParse(r.value);
    if (!turn.success) {
      const fields = turn.error.issues.map((i) => i.path.join(".") || "(root)").join(", ");
      return this.#fail({ kind: "protocol", message: `${op} returned something that is not a Turn (at ${fields})` });
    }
    const refused = checkTurn(turn.data, { reward: this.options.reward, rewarded: this.#rewarded });
    if (refused) return this.#fail({ ...refused, message: `${op}: ${refused.message}` });
    return { kind: "ok", value: turn.data };
  }

  #fail(failure: Failure): Outcome<Turn> {
    this.#failure = failure;
    this.supervisor.fail(this.instance, failure);
    return failedWith(failure);
  }
}
