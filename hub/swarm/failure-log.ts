/** Kinds a client's log leaves out: the scheduler's decisions and lost connections, which are not this client's faults (and are said elsewhere). */
const QUIET_KINDS = new Set(["cancelled", "group-failed", "client-lost", "reclaimed", "abandoned", "server-restart"]);

/** Distinct failure messages said in full; past them only counts, so a message that names each episode cannot flood the log. */
const MAX_DISTINCT = 5;

export interface FailureLog {
  /** An episode this client aborted: why (a failure kind) and the message. */
  failed(episodeId: string, kind: string, message: string): void;
  /** Says what is still counted and stops the timer; later failures are not said. */
  close(): void;
}

/**
 * What `agentjet client` says about the episodes it aborts (a workflow that throws or never ends the
 * episode, an environment that crashes or times out): each new reason once, in full, with the episode;
 * repeats are counted and summed up every `everyMs`. Without it a broken workflow failed every episode
 * in silence, and only the server's end-of-run event counted them.
 */
export function createFailureLog(log: (line: string) => void, options: { everyMs?: number } = {}): FailureLog {
  const everyMs = options.everyMs ?? 10_000;
  const said = new Set<string>();
  let counted = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const summary = (): void => {
    timer = null;
    if (counted.size === 0) return;
    const parts = [...counted].map(([kind, n]) => `${n} ${kind}`);
    const total = [...counted.values()].reduce((a, b) => a + b, 0);
    counted = new Map();
    log(`${total} more episode${total === 1 ? "" : "s"} aborted (${parts.join(", ")}) in the last ${Math.round(everyMs / 1000)} s`);
  };
  return {
    failed(episodeId, kind, message) {
      // closed: the run said its last word (its end event); a late abort is not news
      if (closed || QUIET_KINDS.has(kind)) return;
      const reason = `${kind}: ${message}`;
      if (!said.has(reason) && said.size < MAX_DISTINCT) {
        said.add(reason);
        log(`episode ${episodeId} aborted (${reason}); not scored${said.size === MAX_DISTINCT ? " (further new reasons are only counted)" : ""}`);
        return;
      }
      counted.set(kind, (counted.get(kind) ?? 0) + 1);
      if (timer === null) {
        timer = setTimeout(summary, everyMs);
        timer.unref();
      }
    },
    close() {
      if (timer !== null) clearTimeout(timer);
      summary();
      closed = true;
    },
  };
}
