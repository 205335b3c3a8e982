/** Checks for idle claims every min(10 s, timeout / 2); the timer never keeps the process alive. Returns the stop function. */
export function startReclaimTimer(idleMs: number, reclaimIdle: () => void): () => void {
  const timer = setInterval(reclaimIdle, Math.min(10_000, idleMs / 2));
  timer.unref();
  return () => clearInterval(timer);
}
