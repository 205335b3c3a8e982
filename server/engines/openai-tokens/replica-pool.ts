/** One inference replica and what the engine knows of it. */
export interface Replica {
  readonly url: string;
  readonly weight: number;
  inFlight: number;
  /** Highest weight version this replica has loaded (it still serves every older loaded one). */
  version: number;
  /** While Date.now() is below this, the replica is skipped after a failure. */
  downUntil: number;
  /** Full weights: the replica takes no new calls while its running ones finish before a reload. */
  draining: boolean;
}

/** Replicas behind one policy, picked by least in-flight load per unit of weight. */
export class ReplicaPool {
  readonly replicas: Replica[];
  private turn = 0;

  constructor(
    urls: readonly string[],
    weights: readonly number[] | undefined,
    private readonly cooldownMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.replicas = urls.map((url, i) => ({ url, weight: weights?.[i] ?? 1, inFlight: 0, version: 0, downUntil: 0, draining: false }));
  }

  /**
   * The least loaded replica that has `version` loaded and was not tried yet, never a draining one. A
   * replica marked down is picked only when no healthy one is left, so a cooldown never makes the whole
   * policy unavailable.
   */
  pick(version: number, tried: ReadonlySet<Replica>): Replica | undefined {
    const t = this.now();
    const candidates = this.replicas.filter((r) => r.version >= version && !r.draining && !tried.has(r));
    const healthy = candidates.filter((r) => r.downUntil <= t);
    const pool = healthy.length > 0 ? healthy : candidates;
    let best: Replica | undefined;
    let bestLoad = Infinity;
    // Rotating the start breaks ties round-robin.
    for (let k = 0; k < pool.length; k++) {
      const r = pool[(k + this.turn) % pool.length]!;
      const load = r.inFlight / r.weight;
      if (load < bestLoad) {
        best = r;
        bestLoad = load;
      }
    }
    this.turn++;
    return best;
  }

  markDown(r: Replica): void {
    r.downUntil = this.now() + this.cooldownMs;
  }

  markUp(r: Replica): void {
    r.downUntil = 0;
  }
}
