import { openRunDb } from "../../server/db/run-db.ts";

export interface SeedOptions {
  episodes: number;
  /** Environments, round robin. */
  envs?: readonly string[];
  /** Every n-th episode is aborted (kinds round robin); 0: none. */
  abortEvery?: number;
  /** The newest n episodes get one recorded call each. */
  withCalls?: number;
  /** Episodes left claimed (in flight), newest first. */
  claimed?: number;
}

const KINDS = ["crash", "timeout", "protocol"] as const;

/**
 * Writes a run.db with `episodes` recorded episodes, as the server's tables hold them (created one
 * millisecond apart, newest last), for the dashboard's scale test and bench. Returns what it wrote.
 */
export function seedRunDb(path: string, o: SeedOptions): { ended: number; aborted: number; byEnv: Record<string, number> } {
  const envs = o.envs ?? ["arith", "countdown", "tictactoe"];
  const db = openRunDb(path);
  const episode = db.prepare(
    `INSERT INTO episodes (episode_id, task_id, env, state, agents, attempt, eval, created_at, claimed_at, ended_at, rewards, metadata, abort_reason)
     VALUES (?, ?, ?, ?, '{"solver":{"kind":"policy","target":"main"}}', 0, 0, ?, ?, ?, ?, NULL, ?)`,
  );
  const call = db.prepare(
    `INSERT INTO calls (call_id, episode_id, agent_id, policy, trainable, seq, messages, tools, segments, header_ids, output_ids,
       output_logprobs, output_text, finish_reason, version, started_at, latency_ms)
     VALUES (?, ?, 'solver', 'main', 1, 0, '[{"role":"user","content":"3+4="}]', NULL, '[{"role":"user","text":"3+4=","ids":[1,2,3,4,5]}]',
       '[6,7]', '[8,9]', '[-0.5,-0.25]', '7', 'stop', 0, ?, 3)`,
  );
  const t0 = 1_700_000_000_000;
  let ended = 0;
  let aborted = 0;
  const byEnv: Record<string, number> = {};
  db.transaction(() => {
    for (let i = 0; i < o.episodes; i++) {
      const id = `ep-${String(i).padStart(7, "0")}`;
      const env = envs[i % envs.length]!;
      byEnv[env] = (byEnv[env] ?? 0) + 1;
      const at = t0 + i;
      const inFlight = i >= o.episodes - (o.claimed ?? 0);
      const abort = !inFlight && (o.abortEvery ?? 0) > 0 && i % o.abortEvery! === 0;
      if (inFlight) episode.run(id, `task-${i % 500}`, env, "claimed", at, at, null, null, null);
      else if (abort) {
        aborted += 1;
        const kind = KINDS[(i / o.abortEvery!) % KINDS.length]!;
        episode.run(id, `task-${i % 500}`, env, "aborted", at, at, at + 1, null, JSON.stringify({ kind, message: `${kind} in the sandbox; stderr: Traceback line ${i}` }));
      } else {
        ended += 1;
        episode.run(id, `task-${i % 500}`, env, "ended", at, at, at + 1, JSON.stringify({ solver: (i % 10) / 10 }), null);
      }
      if (i >= o.episodes - (o.withCalls ?? 0)) call.run(`${id}-c0`, id, at);
    }
  })();
  db.close();
  return { ended, aborted, byEnv };
}
