import type { StoreEvents } from "./store-events.ts";

/** Claims gate for weight updates: while closed, `claim` answers `{ kind: "paused" }`. */
export interface ClaimsGate {
  /** Closes the gate (emits `paused` once). */
  pause(): void;
  /** Opens it (emits `resumed` once). */
  resume(): void;
  paused(): boolean;
}

export function createClaimsGate(events: Pick<StoreEvents, "emit">): ClaimsGate {
  let paused = false;
  return {
    pause() {
      if (paused) return;
      paused = true;
      events.emit("paused");
    },
    resume() {
      if (!paused) return;
      paused = false;
      events.emit("resumed");
    },
    paused: () => paused,
  };
}
