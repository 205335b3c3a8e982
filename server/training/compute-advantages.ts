import type { Sample } from "./sample.ts";

export interface AdvantageOptions {
  /** Added to the standard deviation. */
  eps: number;
  /** `episode`: mean/std over (episode, agent) units, each once; `sample`: over samples. */
  baseline: "sample" | "episode";
  /** `per-episode`: a unit split into N samples gives each weight 1/N. */
  lossWeight: "none" | "per-episode";
}

/**
 * GRPO: advantage = (r - mean) / (std + eps) within the group (the samples of one group, `Sample.group`).
 * std is the sample standard deviation (n - 1), as in veRL's GRPO; a group of one has advantage 0.
 * Returns new samples; the inputs are not changed.
 */
export function computeAdvantages(samples: readonly Sample[], options: AdvantageOptions): Sample[] {
  const perUnit = new Map<string, number>();
  for (const s of samples) perUnit.set(unitKey(s), (perUnit.get(unitKey(s)) ?? 0) + 1);
  const rewardsByGroup = new Map<string, number[]>();
  const seen = new Set<string>();
  for (const s of samples) {
    const key = unitKey(s);
    if (options.baseline === "episode") {
      if (seen.has(key)) continue;
      seen.add(key);
    }
    const list = rewardsByGroup.get(s.group);
    if (list) list.push(s.reward);
    else rewardsByGroup.set(s.group, [s.reward]);
  }
  const statsByGroup = new Map<string, { mean: number; std: number }>();
  for (const [group, rs] of rewardsByGroup) statsByGroup.set(group, computeMeanStd(rs));
  return samples.map((s) => {
    const { mean, std } = statsByGroup.get(s.group)!;
    const weight = options.lossWeight === "per-episode" ? 1 / perUnit.get(unitKey(s))! : 1;
    return { ...s, advantage: (s.reward - mean) / (std + options.eps), weight };
  });
}

export function computeMeanStd(xs: readonly number[]): { mean: number; std: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, std: 0 };
  const v = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
  return { mean, std: Math.sqrt(v) };
}

function unitKey(s: Sample): string {
  return `${s.episodeId}\u0000${s.agentId}`;
}
