/**
 * A signal this close to the first one is the same Ctrl-C delivered twice: a terminal sends SIGINT to
 * its whole foreground process group, so the CLI's child process (bin/agentjet.js re-executes itself)
 * gets it from the terminal and again from its parent, which forwards it for `kill -INT <parent>`.
 */
export const DUPLICATE_SIGNAL_MS = 500;

/**
 * Listens for SIGINT and SIGTERM: the first calls `onStop`, a later one `onAgain` (a person asking
 * again); one within DUPLICATE_SIGNAL_MS of the first is ignored. Returns the function that stops listening.
 */
export function onInterrupt(onStop: (signal: NodeJS.Signals) => void, onAgain: (signal: NodeJS.Signals) => void = () => undefined, now: () => number = Date.now): () => void {
  let first: number | null = null;
  const listener = (signal: NodeJS.Signals): void => {
    if (first === null) {
      first = now();
      onStop(signal);
    } else if (now() - first >= DUPLICATE_SIGNAL_MS) onAgain(signal);
  };
  process.on("SIGINT", listener);
  process.on("SIGTERM", listener);
  return () => {
    process.off("SIGINT", listener);
    process.off("SIGTERM", listener);
  };
}
