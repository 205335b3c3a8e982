import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ServedLedger } from "../../../../server/engines/openai-tokens/served-ledger.ts";
import type { TrainSample } from "../../../../server/training/sample.ts";

const ids = fc.array(fc.integer({ min: 0, max: 151_000 }), { minLength: 1, maxLength: 12 });

/** Interleaves unmasked context with trained spans, as timeline merging does. */
function merge(contexts: number[][], spans: number[][]): TrainSample {
  const s: TrainSample = { tokenIds: [], lossMask: [], logprobs: [], advantage: 1, weight: 1 };
  spans.forEach((span, k) => {
    for (const id of contexts[k]!) s.tokenIds.push(id), s.lossMask.push(0), s.logprobs.push(0);
    for (const id of span) s.tokenIds.push(id), s.lossMask.push(1), s.logprobs.push(-1);
  });
  return s;
}

function isPrefix(a: readonly number[], of: readonly number[]): boolean {
  return a.length <= of.length && a.every((x, i) => x === of[i]);
}

const one = (span: number[]): TrainSample => ({
  tokenIds: [0, ...span],
  lossMask: [0, ...span.map(() => 1)],
  logprobs: [0, ...span.map(() => -1)],
  advantage: 1,
  weight: 1,
});

describe("served ledger: a trained span must be a prefix of a served output", () => {
  it("accepts every merge of served outputs (or their cut prefixes) and rejects any changed trained id", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(ids, ids, fc.nat()), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.integer({ min: 1, max: 1000 }),
        (calls, pick, delta) => {
          const ledger = new ServedLedger(1 << 12);
          const outputs = calls.map(([, out]) => out);
          for (const out of outputs) ledger.record(out, []);
          // The server may keep only a prefix of an output (cut at a stop string).
          const spans = calls.map(([, out, cut]) => out.slice(0, 1 + (cut % out.length)));
          const sample = merge(
            calls.map(([ctx]) => ctx),
            spans,
          );
          expect(() => ledger.verify({ samples: [sample] })).not.toThrow();

          const masked = sample.lossMask.flatMap((m, i) => (m ? [i] : []));
          const at = masked[pick % masked.length]!;
          const changed = { ...sample, tokenIds: [...sample.tokenIds] };
          changed.tokenIds[at] = changed.tokenIds[at]! + delta;
          let i = at;
          while (i > 0 && changed.lossMask[i - 1]) i--;
          let j = at;
          while (j < changed.lossMask.length && changed.lossMask[j]) j++;
          const span = changed.tokenIds.slice(i, j);
          fc.pre(!outputs.some((o) => isPrefix(span, o)));
          expect(() => ledger.verify({ samples: [changed] })).toThrow(expect.objectContaining({ code: "AJ_ERR_UNSERVED_TOKENS" }));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("one stop id may follow a served prefix; any other appended id may not", () => {
    const ledger = new ServedLedger();
    ledger.record([5, 6, 7], [99]);
    expect(() => ledger.verify({ samples: [one([5, 6, 99])] })).not.toThrow();
    expect(() => ledger.verify({ samples: [one([5, 6, 7, 99])] })).not.toThrow();
    expect(() => ledger.verify({ samples: [one([5, 6, 98])] })).toThrow(expect.objectContaining({ code: "AJ_ERR_UNSERVED_TOKENS" }));
    expect(() => ledger.verify({ samples: [one([6, 7])] })).toThrow(expect.objectContaining({ code: "AJ_ERR_UNSERVED_TOKENS" }));
  });

  it("keeps a bounded window: old outputs are forgotten after two generations", () => {
    const ledger = new ServedLedger(16);
    ledger.record([1, 2, 3], []);
    for (let k = 0; k < 8; k++) ledger.record([1000 + k], []);
    expect(() => ledger.verify({ samples: [one([1007])] })).not.toThrow();
    for (let k = 0; k < 16; k++) ledger.record([2000 + k], []);
    expect(() => ledger.verify({ samples: [one([1, 2, 3])] })).toThrow();
    expect(() => ledger.verify({ samples: [one([2015])] })).not.toThrow();
  });

  it("grows past its first table without losing keys", () => {
    const ledger = new ServedLedger(1 << 16);
    const outs = Array.from({ length: 3000 }, (_, k) => [k, k + 1, k + 2]);
    for (const o of outs) ledger.record(o, []);
    for (const o of outs) expect(() => ledger.verify({ samples: [one(o)] })).not.toThrow();
  });
});
