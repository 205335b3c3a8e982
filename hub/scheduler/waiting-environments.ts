import type { EnvLane } from "./slots.ts";
import type { SchedulerEvent, WaitingEnvironment } from "./types.ts";

/** Only episodes still to dispatch count: a lane's queue may hold entries that already left (run, failed). */
function queuedOf(lane: EnvLane): number {
  let n = 0;
  for (const slot of lane.queue) if (slot.state === "queued") n += 1;
  return n;
}

const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`;

/**
 * Environments whose episodes wait with no connected client able to run them. Their groups cannot end,
 * so the batches that hold them cannot finish and no later batch is planned: once the other
 * environments' planned episodes are played, training waits. After `afterMs` without such a client
 * (counted from the first client's hello: before it the run says it waits for clients) each one is
 * reported once with what it waits for and how to end the wait, and reported again when a client that
 * runs it connects.
 */
export class WaitingEnvironments {
  readonly #lanes: readonly EnvLane[];
  readonly #afterMs: number;
  readonly #emit: (event: SchedulerEvent) => void;
  /** Lanes with queued episodes and no connected client, since when, and whether they were reported. */
  readonly #waiting = new Map<EnvLane, { since: number; reported: boolean }>();
  /** The connected clients that could run each lane when last looked at (named once they are gone). */
  readonly #lastClients = new Map<EnvLane, string[]>();
  /** When the first client connected: before that the run waits for clients, not for one environment's. */
  #firstClientAt: number | null = null;

  constructor(lanes: readonly EnvLane[], afterMs: number, emit: (event: SchedulerEvent) => void) {
    this.#lanes = lanes;
    this.#afterMs = afterMs;
    this.#emit = emit;
  }

  /** A client said hello: from now on a lane without one is news. */
  clientConnected(now: number): void {
    this.#firstClientAt ??= now;
  }

  /** Looks at every lane: starts, reports or ends its wait. */
  check(now: number): void {
    for (const lane of this.#lanes) {
      const clients = [...lane.clients].filter((c) => c.link !== null).map((c) => c.id);
      const served = clients.length > 0;
      if (served) this.#lastClients.set(lane, clients);
      const queued = served ? 0 : queuedOf(lane);
      const wait = this.#waiting.get(lane);
      if (served || queued === 0) {
        if (!wait) continue;
        this.#waiting.delete(lane);
        if (wait.reported && served) {
          this.#emit({
            type: "env-served",
            env: lane.config.name,
            clients,
            message: `${label(lane)}: ${quoted(clients)} can run it; its episodes go on (they waited ${seconds(now - wait.since)})`,
          });
        }
        continue;
      }
      if (!wait) {
        this.#waiting.set(lane, { since: now, reported: false });
        continue;
      }
      if (!wait.reported && this.#firstClientAt !== null && now - Math.max(wait.since, this.#firstClientAt) >= this.#afterMs) {
        wait.reported = true;
        this.#emit({ type: "env-waiting", env: lane.config.name, queued, message: this.#describe(lane, queued, now - wait.since) });
      }
    }
  }

  /** The environments reported as waiting, now. */
  list(now: number): WaitingEnvironment[] {
    return this.#lanes.flatMap((lane) => {
      const wait = this.#waiting.get(lane);
      if (!wait?.reported) return [];
      const queued = queuedOf(lane);
      return [{ env: lane.config.name, queued, waitingMs: now - wait.since, message: this.#describe(lane, queued, now - wait.since) }];
    });
  }

  #describe(lane: EnvLane, queued: number, forMs: number): string {
    const last = this.#lastClients.get(lane) ?? [];
    const gone = last.length > 0 ? ` (${quoted(last)}, which could, ${last.length > 1 ? "are" : "is"} gone)` : "";
    const others = this.#lanes.filter((l) => l !== lane && l.config.weight !== 0).map((l) => l.config.name);
    const mix = others.length > 0 ? `; the other environments (${others.join(", ")}) go on only until the batches already planned are played` : "";
    const pinned = lane.config.hash === undefined ? "" : ` with hash ${lane.config.hash.slice(0, 12)}${lane.config.acceptDev ? " (or a development version)" : ""}`;
    return (
      `no connected client can run ${label(lane)} for ${seconds(forMs)}${gone}: ${queued} of its episodes wait, ` +
      `and the batches that hold them cannot finish, so training waits for them${mix}. ` +
      `Start a client that offers ${lane.config.name}@${lane.config.version}${pinned} (agentjet client --envs ${lane.config.name})`
    );
  }
}

const quoted = (ids: readonly string[]): string => ids.map((id) => `'${id}'`).join(", ");

function label(lane: EnvLane): string {
  return `${lane.config.name}@${lane.config.version}`;
}
