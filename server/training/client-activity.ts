/**
 * Which clients count for `any-client` / `all-clients`: a client is active once it has ended a rewarded
 * episode since the last sync, and drops out after `idleS` seconds without a sign of life, or at once when
 * its connection closes (`forget`). A client whose connection closed counts again only once it is heard
 * from again (`touch`, `recordAgreeSync`): an episode of its that is reported ended after the close (an
 * end on another of its connections, handled after the close) does not bring it back, else `all-clients`
 * would wait `idleS` for an agreement that cannot come.
 */
export class ClientActivity {
  readonly #idleMs: number;
  readonly #rewardedSinceSync = new Set<string>();
  readonly #agreed = new Set<string>();
  readonly #lastSeen = new Map<string, number>();
  /**
   * Clients whose connection closed and that have not been heard from since, with when it closed, oldest
   * first: kept `idleS` (an end in flight at the close arrives well within it), so that clients that come
   * and go under new ids do not pile up here over a long run.
   */
  readonly #gone = new Map<string, number>();

  constructor(idleS: number) {
    this.#idleMs = idleS * 1000;
  }

  recordEpisodeEnd(clientId: string, rewarded: boolean, now: number): void {
    if (this.#gone.has(clientId)) return;
    this.#lastSeen.set(clientId, now);
    if (rewarded) this.#rewardedSinceSync.add(clientId);
  }

  recordAgreeSync(clientId: string, now: number): void {
    this.#gone.delete(clientId);
    this.#lastSeen.set(clientId, now);
    this.#agreed.add(clientId);
  }

  /** Any other sign of life (a heartbeat, a chat call). */
  touch(clientId: string, now: number): void {
    this.#gone.delete(clientId);
    this.#lastSeen.set(clientId, now);
  }

  /** The client is gone (its connection closed): it no longer counts for `all-clients`. */
  forget(clientId: string, now: number): void {
    this.#lastSeen.delete(clientId);
    this.#rewardedSinceSync.delete(clientId);
    this.#agreed.delete(clientId);
    for (const [id, at] of this.#gone) {
      if (now - at <= this.#idleMs) break;
      this.#gone.delete(id);
    }
    this.#gone.delete(clientId);
    this.#gone.set(clientId, now);
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
