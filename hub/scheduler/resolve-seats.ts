import type { Task } from "../../sdk/env/index.ts";
import { UnknownRoleTargetError, UnmappedRoleError } from "./errors.ts";
import type { AgentTarget } from "./port.ts";

/** Who plays each seat of one task: an agent that calls the server, or the environment's built-in player. */
export interface Seats {
  /** Agents that call the server, in seat order, with their role and target. */
  agents: Array<{ agentId: string; role: string; target: AgentTarget }>;
  /** Agents the environment plays itself (`@builtin`). */
  builtin: string[];
}

const BUILTIN = "@builtin";

/**
 * Resolves a task's seats (its own `agents`, else the manifest's) through the config's role map. A seat
 * with role `r` that is the k-th seat of that role (1-based, seat order) takes the first key present of
 * `r#k`, `r`, `*`; the value is a policy, a frozen model, or `@builtin`.
 */
export function resolveSeats(
  env: string,
  seats: ReadonlyArray<{ id: string; role: string }>,
  roles: Readonly<Record<string, string>>,
  known: { policies: readonly string[]; frozen: readonly string[] },
): Seats {
  const out: Seats = { agents: [], builtin: [] };
  const seen = new Map<string, number>();
  for (const seat of seats) {
    const k = (seen.get(seat.role) ?? 0) + 1;
    seen.set(seat.role, k);
    const key = [`${seat.role}#${k}`, seat.role, "*"].find((name) => roles[name] !== undefined);
    if (key === undefined) throw new UnmappedRoleError(env, seat.role);
    const target = roles[key]!;
    if (target === BUILTIN) out.builtin.push(seat.id);
    else if (known.policies.includes(target)) out.agents.push({ agentId: seat.id, role: seat.role, target: { kind: "policy", name: target } });
    else if (known.frozen.includes(target)) out.agents.push({ agentId: seat.id, role: seat.role, target: { kind: "frozen", name: target } });
    else throw new UnknownRoleTargetError(env, key, target);
  }
  return out;
}

/** The seats of `task`: its own when it deals them, the manifest's otherwise. */
export function seatsOf(task: Task, manifestSeats: ReadonlyArray<{ id: string; role: string }>): ReadonlyArray<{ id: string; role: string }> {
  return task.agents ?? manifestSeats;
}

/** Checks every target of the role map names something that exists, before any task is seen. */
export function checkRoleTargets(env: string, roles: Readonly<Record<string, string>>, known: { policies: readonly string[]; frozen: readonly string[] }): void {
  for (const [key, target] of Object.entries(roles)) {
    if (target !== BUILTIN && !known.policies.includes(target) && !known.frozen.includes(target)) throw new UnknownRoleTargetError(env, key, target);
  }
}
