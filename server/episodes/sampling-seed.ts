/**
 * Sampling seeds of deterministic mode (`run.deterministic`): every episode gets a seed from the run's
 * seed and a key that names what it plays (the scheduler's slot and attempt, else its episode id), and
 * every policy call of it samples with a seed from that, its agent and its call index, so what a call
 * generates never depends on which other calls ran first.
 */

/** FNV-1a over the parts, 32-bit, unsigned. */
function hashParts(parts: ReadonlyArray<string | number>): number {
  const s = parts.join("\u0000");
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** An episode's sampling seed from the run's seed and its key. */
export function episodeSamplingSeed(runSeed: number, key: string): number {
  return hashParts(["episode", runSeed, key]);
}

/** The seed of one generated choice: the episode's seed, the agent, its call index and the choice index. */
export function callSamplingSeed(episodeSeed: number, agentId: string, callIndex: number, choice: number): number {
  return hashParts(["call", episodeSeed, agentId, callIndex, choice]);
}
