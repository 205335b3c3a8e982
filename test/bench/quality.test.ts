import { describe, expect, it } from "vitest";
import { baselineFor, compareFingerprints, type QualityEntry } from "../../bench/quality-history.ts";
import { qualityFingerprint, type QualityRun } from "../../bench/quality.ts";

/** The shortest run the quality bench can make: 20 warm-start steps then two RL steps of a tiny model on the cocktail. */
const TINY: QualityRun = {
  name: "tiny",
  example: "cpu-cocktail",
  steps: 2,
  warmSteps: 20,
  model: { layers: 1, dim: 16, heads: 2, context: 64 },
  batchTasks: 4,
  groupSize: 2,
};

describe("bench:quality fingerprints (issue 26: training quality across commits)", () => {
  it("two deterministic runs of the same code give the same fingerprint, wall time aside", { timeout: 180_000 }, async () => {
    const a = await qualityFingerprint(TINY);
    const b = await qualityFingerprint(TINY);
    expect(a.steps).toBe(2);
    expect(Object.keys(a.final).sort()).toEqual(["arith", "countdown"]);
    expect(a.curve.arith).toHaveLength(2);
    expect(a.weightsSha256).toMatch(/^[0-9a-f]{64}$/);
    const { wallS: _wa, ...restA } = a;
    const { wallS: _wb, ...restB } = b;
    expect(restB).toEqual(restA);
    expect(compareFingerprints(a, b)).toEqual({ changed: [], weightsChanged: false });
  });

  it("the comparison names a changed weights hash and reward deltas; the baseline is the last other commit", () => {
    const entry = (commit: string, hash: string, reward: number): QualityEntry => ({
      run: "arith", steps: 1, final: { arith: { meanReward: reward, success: 0 } }, curve: { arith: [reward] },
      weightsSha256: hash, wallS: 1, commit, dirty: false, time: "t",
    });
    const cmp = compareFingerprints(entry("a", "0".repeat(64), 0.5), entry("b", "1".repeat(64), 0.25));
    expect(cmp.weightsChanged).toBe(true);
    expect(cmp.changed[0]).toMatch(/^weights hash CHANGED/);
    expect(cmp.changed).toContain("arith final meanReward: 0.5000 -> 0.2500 (-0.2500)");
    const history = [entry("a", "x", 0), entry("b", "y", 0), entry("b", "z", 0)];
    expect(baselineFor(history, { run: "arith", commit: "b", dirty: false })?.weightsSha256).toBe("x");
    expect(baselineFor(history, { run: "arith", commit: "c", dirty: false })?.weightsSha256).toBe("z");
    expect(baselineFor([entry("b", "y", 0)], { run: "arith", commit: "b", dirty: false })?.weightsSha256).toBe("y");
  });
});
