import { describe, expect, it } from "vitest";
import { promptIds } from "../../../server/tokenizers/prompt-ids.ts";
import { mergeEpisodeCalls, mergeTimelines, type MergeOptions } from "../../../server/training/merge-timelines.ts";
import { lossTriples, unmergedSequence } from "./helpers/loss-triples.ts";
import { recordEpisode, step } from "./helpers/record-episode.ts";

const TEXT: MergeOptions = { match: "text", ignoreTools: true, overflow: "drop" };
const TOKEN: MergeOptions = { match: "token", ignoreTools: true, overflow: "drop" };
const ep = { episodeId: "e1", agentId: "a1" };

describe("mergeTimelines", () => {
  it("merges an append-only conversation into one sample with the mask on every generated span", () => {
    const calls = recordEpisode([step("hi"), step("yes", "go", { bumpVersion: true }), step("done")], ep);
    for (const opts of [TEXT, TOKEN]) {
      const { timelines, stats } = mergeTimelines(calls, opts);
      expect(timelines).toHaveLength(1);
      const t = timelines[0]!;
      const last = calls[2]!;
      expect(t.tokenIds).toEqual(unmergedSequence(last).tokenIds);
      expect(t.callIds).toEqual(calls.map((c) => c.callId));
      // "hi" + end-of-turn, "yes" + end-of-turn, "done" + end-of-turn.
      expect(t.lossMask.filter((m) => m === 1)).toHaveLength(3 + 4 + 5);
      expect(t.versions.filter((v) => v >= 0)).toEqual([0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
      expect(lossTriples(timelines)).toEqual(lossTriples(calls.map(unmergedSequence)));
      expect(stats).toMatchObject({ calls: 3, timelines: 1, overflowDropped: 0, emptyDropped: 0, retokenizedSpans: 0 });
      expect(stats.mergedTokens).toBe(t.tokenIds.length);
      expect(stats.unmergedTokens).toBe(calls.reduce((a, c) => a + unmergedSequence(c).tokenIds.length, 0));
    }
  });

  it("keeps the header and the template's text after the end-of-turn out of the loss", () => {
    const calls = recordEpisode([step("ab"), step("c")], ep);
    const t = mergeTimelines(calls, TOKEN).timelines[0]!;
    const header = calls[0]!.headerIds;
    const start = promptIds(calls[0]!).length - header.length;
    expect(t.tokenIds.slice(start, start + header.length)).toEqual(header);
    expect(t.lossMask.slice(start, start + header.length + 4)).toEqual([...header.map(() => 0), 1, 1, 1, 0]);
  });

  it("starts a new sample where the history was truncated, and drops nothing", () => {
    const calls = recordEpisode(
      [step("a"), step("b"), step("c"), step("d", "ok", { kind: "truncate", pick: 0 }), step("e")],
      ep,
    );
    const { timelines } = mergeTimelines(calls, TEXT);
    expect(timelines.map((t) => t.callIds.length)).toEqual([3, 2]);
    expect(lossTriples(timelines)).toEqual(lossTriples(calls.map(unmergedSequence)));
  });

  it("gives a retried call its own sample and lets the retry continue the timeline", () => {
    const calls = recordEpisode([step("a"), step("b"), step("x", "ok", { kind: "retry" }), step("c")], ep);
    const { timelines } = mergeTimelines(calls, TOKEN);
    expect(timelines.map((t) => t.callIds.map((id) => id.split("/")[2]))).toEqual([["1"], ["0", "2", "3"]]);
    expect(lossTriples(timelines)).toEqual(lossTriples(calls.map(unmergedSequence)));
  });

  // Regression (issue 18, item 6): with text matching and ignoreTools, a changed tool list merged and
  // earlier outputs trained under a tools block they never saw.
  it("starts a new sample when the tool definitions change, whatever match and ignoreTools say", () => {
    const calls = recordEpisode([step("a", "ok", { kind: "tools" }), step("b", "ok", { kind: "tools" })], ep);
    for (const opts of [TEXT, TOKEN, { ...TEXT, ignoreTools: false }, { ...TOKEN, ignoreTools: false }]) {
      const { timelines } = mergeTimelines(calls, opts);
      expect(timelines).toHaveLength(2);
      expect(lossTriples(timelines)).toEqual(lossTriples(calls.map(unmergedSequence)));
    }
  });

  it("ignoreTools compares equal definitions sent in another key order as equal", () => {
    const calls = recordEpisode([step("a"), step("b")], ep);
    const a = structuredClone(calls);
    a[0]!.tools = [{ name: "search", parameters: { type: "object", properties: {} } }];
    a[1]!.tools = [{ parameters: { properties: {}, type: "object" }, name: "search" }];
    expect(mergeTimelines(a, TEXT).timelines).toHaveLength(1);
    expect(mergeTimelines(a, { ...TEXT, ignoreTools: false }).timelines).toHaveLength(2);
  });

  // Regression (issue 18, item 7): equal text under different ids made text matching train one call's
  // ids in the other's place and drop the template's newline.
  it("never trains a re-tokenized span: a text match over different ids starts a new sample", () => {
    const calls = recordEpisode([step("ab"), step("cd")], ep);
    const seg = calls[1]!.segments[2]!;
    const forged = structuredClone(calls);
    forged[1]!.segments[2] = { ...seg, ids: [...seg.ids.slice(0, 3), 99, ...seg.ids.slice(4)] };
    const text = mergeTimelines(forged, TEXT);
    expect(text.timelines).toHaveLength(2);
    expect(text.stats.retokenizedSpans).toBe(1);
    expect(lossTriples(text.timelines)).toEqual(lossTriples(forged.map(unmergedSequence)));
    expect(mergeTimelines(forged, TOKEN).timelines).toHaveLength(2);
  });

  it("trains a repeated generation (same text, other ids) only in the context it was served in", () => {
    const calls = recordEpisode(
      [step("ab"), step("xy", "ok", { kind: "duplicate" }), step("cd")],
      ep,
    );
    expect(calls[1]!.outputText).toBe(calls[0]!.outputText);
    for (const opts of [TEXT, TOKEN]) {
      const { timelines } = mergeTimelines(calls, opts);
      expect(lossTriples(timelines)).toEqual(lossTriples(calls.map(unmergedSequence)));
    }
    expect(mergeTimelines(calls, TEXT).stats.retokenizedSpans).toBe(1);
  });

  it("drops or keeps overflowed calls as configured, counting them", () => {
    const calls = recordEpisode([step("a"), step("", "ok", { kind: "overflow" }), step("b")], ep);
    const dropped = mergeTimelines(calls, TEXT);
    expect(dropped.stats.overflowDropped).toBe(1);
    expect(dropped.timelines.map((t) => t.callIds.length)).toEqual([2]);
    const kept = mergeTimelines(calls, { ...TEXT, overflow: "keep" });
    expect(kept.stats).toMatchObject({ overflowDropped: 0, emptyDropped: 1 });
    expect(lossTriples(kept.timelines)).toEqual(lossTriples(calls.map(unmergedSequence)));
  });

  it("keeps the agents of an episode apart", () => {
    const a = recordEpisode([step("a"), step("b")], { episodeId: "e", agentId: "p1" });
    const b = recordEpisode([step("a"), step("b")], { episodeId: "e", agentId: "p2" });
    const { timelines, stats } = mergeEpisodeCalls([a[0]!, b[0]!, a[1]!, b[1]!], TOKEN);
    expect(timelines.map((t) => t.agentId).sort()).toEqual(["p1", "p2"]);
    expect(stats.calls).toBe(4);
  });
});
