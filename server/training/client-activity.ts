/**
 * Which clients count for `any-client` / `all-clients`: a client is active once it has ended a rewarded
 * episode since the last sync, and drops out after `idleS` seconds without a sign of life.
 */
export class ClientActivity {
  readonly #idleMs: number;
  readonly #rewardedSinceSync = new Set<string>();
  readonly #agreed = new Set<string>();
  readonly #lastSeen = new Map<string, number>();

  constructor(idleS: number) {
    this.#idleMs = idleS * 1000;
  }

  recordEpisodeEnd(clientId: string, rewarded: boolean, now: number): void {
    this.#lastSeen.set(clientId, now);
    if (rewarded) this.#rewardedSinceSync.add(clientId);
  }

  recordAgreeSync(clientId: string, now: number): void {
    this.#lastSeen.set(clientId, now);
    this.#agreed.add(clientId);
  }

  /** Any other sign of life (a heartbeat, a chat call). */
  touch(clientId: string, now: number): void {
    this.#lastSeen.set(clientId, now);
  }

  /** The client is gone (its connection closed): it no longer counts for `all-clients`. */
  forget(clientId: string): void {
    this.#lastSeen.delete(clientId);
    this.#rewardedSinceSync.delete(clientId);
    this.#agreed.delete(clientId);
  }

  active(now: number): string[] {
    return [...this.#rewardedSinceSync].filter((c) => now - (this.#lastSeen.get(c) ?? -Infinity) <= this.#idleMs);
  }

  agreed(): ReadonlySet<string> {
    return this.#agreed;
  }

  /** A weight sync happened: activity and agreements start over. */
  resetAfterSync(): void {
    this.#rewardedSinceSync.clear();
    this.#agreed.clear();
  }
}
