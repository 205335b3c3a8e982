import { describe, expect, it } from "vitest";
import {
  Rng,
  backwardSequence,
  createLayout,
  forwardSequence,
  initWeights,
  transposeWeights,
  viewWeights,
  type ModelShape,
} from "../../../../server/engines/embedded/index.ts";

/**
 * A pass that makes only some rows' logits (the rows that score a trained token) gives those rows the
 * full pass's logits and the full pass's gradient, bit for bit: the rows it leaves out would have had no
 * gradient, and every sum runs over the same terms in the same order.
 */
describe.each([1, 2])("a pass over some rows' logits (%i layers)", (layers) => {
  const shape: ModelShape = { vocabSize: 23, layers, dim: 16, heads: 2, context: 64, mlpDim: 32, tiedOutput: false };
  const layout = createLayout(shape);
  const V = shape.vocabSize;

  it.each([
    ["a reply after a long prompt", [40, 41, 42, 43, 44, 45, 46]],
    ["scattered rows, one block of four straddled", [3, 9, 10, 30, 55]],
  ])("equals the full pass: %s", (_, wanted) => {
    const rng = new Rng(7);
    const buf = new Float32Array(layout.size);
    initWeights(layout, buf, 11, 0.3);
    const w = viewWeights(layout, buf);
    const wT = transposeWeights(w, shape);
    const ids = Array.from({ length: 60 }, () => Math.floor(rng.next() * V));
    const rows = Int32Array.from(wanted);
    const dRow = Array.from(rows, () => Array.from({ length: V }, () => rng.gaussian()));

    const full = forwardSequence(w, shape, ids);
    const part = forwardSequence(w, shape, ids, rows);
    expect(part.logits.length).toBe(rows.length * V);
    rows.forEach((t, r) => {
      expect(part.logitRow[t]).toBe(r);
      expect(part.logits.subarray(r * V, (r + 1) * V)).toEqual(full.logits.subarray(t * V, (t + 1) * V));
    });
    expect([...part.logitRow].filter((r) => r >= 0)).toHaveLength(rows.length);

    const dFull = new Float32Array(ids.length * V);
    const dPart = new Float32Array(rows.length * V);
    rows.forEach((t, r) => {
      dFull.set(dRow[r]!, t * V);
      dPart.set(dRow[r]!, r * V);
    });
    const gFull = viewWeights(layout, new Float32Array(layout.size));
    const gPart = viewWeights(layout, new Float32Array(layout.size));
    backwardSequence(w, wT, gFull, shape, full, dFull);
    backwardSequence(w, wT, gPart, shape, part, dPart);
    expect(gPart.buffer).toEqual(gFull.buffer);
    expect(gPart.buffer.some((x) => x !== 0)).toBe(true);
  });
});
