import type { CallRecord } from "../tracker/call-record.ts";
import type { Episode } from "./episode.ts";

export interface EpisodeStoreEvents {
  registered: (episode: Episode) => void;
  claimed: (episode: Episode) => void;
  /** `calls`: the episode's trainable (policy) calls, in (agent, seq) order. */
  ended: (episode: Episode, calls: CallRecord[]) => void;
  aborted: (episode: Episode, calls: CallRecord[]) => void;
  /** An idle claim was returned to `registered`; its partial record is already discarded. */
  reclaimed: (episode: Episode) => void;
  /** The server gave up a claimed episode (a weight sync's drain timeout); `aborted` fires for it too. */
  abandoned: (episode: Episode) => void;
  /** Claims paused (a weight sync starts): `claim` answers `paused` until `resumed`. */
  paused: () => void;
  /** Claims resumed: schedulers waiting on the gate go on at once. */
  resumed: () => void;
  /** Episode rows reached run.db (a file: they are committed after their transition): readers of run.db see the transitions since. */
  persisted: () => void;
}

export interface StoreEvents {
  emit<E extends keyof EpisodeStoreEvents>(event: E, ...args: Parameters<EpisodeStoreEvents[E]>): void;
  /** Returns the unsubscribe function. */
  on<E extends keyof EpisodeStoreEvents>(event: E, listener: EpisodeStoreEvents[E]): () => void;
}

/** The store's listeners. A listener that throws breaks neither the transition nor the other listeners. */
export function createStoreEvents(onListenerError: (err: unknown) => void): StoreEvents {
  const listeners: { [E in keyof EpisodeStoreEvents]: Set<EpisodeStoreEvents[E]> } = {
    registered: new Set(),
    claimed: new Set(),
    ended: new Set(),
    aborted: new Set(),
    reclaimed: new Set(),
    abandoned: new Set(),
    paused: new Set(),
    resumed: new Set(),
    persisted: new Set(),
  };
  return {
    emit(event, ...args) {
      for (const l of listeners[event]) {
        try {
          (l as (...a: typeof args) => void)(...args);
        } catch (err) {
          onListenerError(err);
        }
      }
    },
    on(event, listener) {
      listeners[event].add(listener);
      return () => {
        listeners[event].delete(listener);
      };
    },
  };
}
