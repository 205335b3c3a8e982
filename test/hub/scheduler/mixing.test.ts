import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allZeroStep, apportion, planQuotas, sharesAt, weightAt } from "../../../hub/scheduler/index.ts";

describe("weights and schedules", () => {
  it("follows constant, linear and cosine schedules from the start share to the end share by step N", () => {
    const lin = { kind: "linear", start: 0.5, end: 0, steps: 200 } as const;
    const cos = { kind: "cosine", start: 0.5, end: 0, steps: 200 } as const;
    expect(weightAt({ kind: "constant", start: 0.3, end: 0.9, steps: 10 }, 5)).toBe(0.3);
    expect([0, 100, 200, 400].map((s) => weightAt(lin, s))).toEqual([0.5, 0.25, 0, 0]);
    expect(weightAt(cos, 0)).toBeCloseTo(0.5);
    expect(weightAt(cos, 100)).toBeCloseTo(0.25);
    expect(weightAt(cos, 50)).toBeGreaterThan(weightAt(lin, 50));
    expect(weightAt(cos, 200)).toBeCloseTo(0);
  });

  it("normalises weights into shares", () => {
    expect(sharesAt([1, 3], 0)).toEqual([0.25, 0.75]);
    expect(sharesAt([0, 0], 0)).toEqual([0, 0]);
  });

  it("finds the first step where every weight is 0 (a batch there holds nothing)", () => {
    const down = { kind: "linear", start: 1, end: 0, steps: 10 } as const;
    const up = { kind: "cosine", start: 0, end: 1, steps: 5 } as const;
    expect(allZeroStep([0, 0])).toBe(0);
    expect(allZeroStep([up, 0])).toBe(0);
    expect(allZeroStep([down, 0])).toBe(10);
    expect(allZeroStep([down, { ...down, steps: 30 }])).toBe(30);
    expect(allZeroStep([down, up])).toBeNull();
    expect(allZeroStep([0, 1])).toBeNull();
  });
});

describe("quotas by largest remainder", () => {
  it("splits exactly, ties to the earlier environment", () => {
    expect(apportion([0.5, 0.5], 3)).toEqual([2, 1]);
    expect(apportion([0.2, 0.3, 0.5], 10)).toEqual([2, 3, 5]);
    expect(apportion([1, 1, 1], 4)).toEqual([2, 1, 1]);
  });

  it("never starves an environment with a small share: its seat comes in a later batch", () => {
    let ledger = { target: [0, 0], given: [0, 0] };
    const got: number[][] = [];
    for (let b = 0; b < 10; b++) {
      const r = planQuotas(ledger, [0.9, 0.1], 2);
      ledger = r.ledger;
      got.push(r.quotas);
    }
    expect(got.every((q) => q[0]! + q[1]! === 2)).toBe(true);
    expect(ledger.given).toEqual([18, 2]);
  });

  it("fills every batch exactly and keeps each environment within one seat of its ideal", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 10, noNaN: true }), { minLength: 1, maxLength: 5 }).filter((w) => w.some((x) => x > 0.01)),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 12 }),
        (weights, seats, batches) => {
          let ledger = { target: weights.map(() => 0), given: weights.map(() => 0) };
          const shares = sharesAt(weights, 0);
          for (let b = 0; b < batches; b++) {
            const r = planQuotas(ledger, shares, seats);
            expect(r.quotas.reduce((a, c) => a + c, 0)).toBe(seats);
            expect(r.quotas.every((q) => q >= 0)).toBe(true);
            ledger = r.ledger;
          }
          shares.forEach((s, i) => expect(Math.abs(ledger.given[i]! - s * seats * batches)).toBeLessThan(1 + 1e-9));
        },
      ),
    );
  });
});
