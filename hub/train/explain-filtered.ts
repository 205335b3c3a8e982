import type { StepReport } from "../../server/training/index.ts";

/**
 * Why a sync trained nothing, in words: a step that failed (its engine's error: a trainer down or
 * refusing), else which reward every dropped group shared. All 0 means the policy never succeeds
 * (warm-start it, or give the environment a shaped reward); all the top reward means the tasks are too
 * easy; one constant in between usually means a collapsed policy.
 */
export function explainFiltered(reports: readonly StepReport[]): string {
  const failed = reports.filter((r) => r.outcome === "failed");
  if (failed.length > 0) {
    // its batch reached the engine, which said no: the filtering is not what stops the run
    return failed.map((r) => `the training step of '${r.policy}' failed: ${r.error ?? "no error message"}`).join("; ");
  }
  const byReward = new Map<number, number>();
  for (const r of reports) for (const g of r.droppedGroups) byReward.set(g.reward, (byReward.get(g.reward) ?? 0) + 1);
  const groups = [...byReward.values()].reduce((a, b) => a + b, 0);
  if (groups === 0) {
    const empty = reports.filter((r) => r.samples === 0).map((r) => `'${r.policy}'`);
    return empty.length > 0
      ? `no samples for ${empty.join(", ")}: its agents made no trainable call in these batches (episodes that end before its seat moves, or calls that overflowed the context)`
      : "no group reached the trainer";
  }
  const parts = [...byReward].sort((a, b) => b[1] - a[1]).map(([reward, n]) => `${n} at reward ${Number(reward.toFixed(4))}`);
  const only = byReward.size === 1 ? [...byReward.keys()][0]! : null;
  const hint =
    only === 0
      ? ": the policy never succeeds, so no group has a signal; start from a policy that can do the format (warmStart in the run config)"
      : byReward.size === 1
        ? ": every episode scores the same; a policy answering one thing to everything (collapsed) or tasks it always solves"
        : "";
  return `all ${groups} group(s) had equal rewards within the group (${parts.join(", ")})${hint}`;
}
