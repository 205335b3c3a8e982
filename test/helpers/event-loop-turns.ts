/** Runs `work` and counts the turns the event loop made meanwhile (a chain of immediates runs once per turn). */
export async function countTurns<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { value: await work(), turns };
  } finally {
    ticking = false;
  }
}
