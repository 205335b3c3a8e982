import { EmbeddedModelSchema, OptimizerSchema } from "../server/config/run-config.ts";
import { createEmbeddedEngine } from "../server/engines/embedded/index.ts";
import { createEmbeddedTokenizer, EMBEDDED_IDS } from "../server/tokenizers/embedded.ts";
import type { ChatTurnMessage, ToolDefinition } from "../server/tokenizers/tokenizer.ts";
import type { CallRecord } from "../server/tracker/call-record.ts";
import { buildTrainBatch } from "../server/training/coordinator.ts";
import { mergeEpisodeCalls, type MergeOptions, type MergeStats } from "../server/training/merge-timelines.ts";
import { measurePrefixSavings } from "../server/training/prefix-tree.ts";
import type { Sample, TrainSample } from "../server/training/sample.ts";
import { type Bench, type BenchTable, fmt, median, timeRuns } from "./harness.ts";

/**
 * Timeline merging on multi-turn workloads (char-level embedded tokenizer, so tokens ~ characters):
 * training tokens one-sample-per-call vs merged, against the ideal (one sample per (episode, agent) for
 * append-only histories); merge time per episode; the embedded engine's train step on both batches.
 */

interface Workload {
  name: string;
  agents: number;
  calls: number;
  system: number;
  observation: [number, number];
  output: [number, number];
  /** Share of calls that are retried (same context, new output): branches a prefix tree can share. */
  retry: number;
  /** Every this many turns the history is cut to the system message and the last observation. */
  truncateEvery?: number;
  /** Every this many turns the tool list changes (one tool added). */
  toolsEvery?: number;
  /** Share of generations that repeat the previous one's text under other ids (a repeated tool call under BPE). */
  duplicate?: number;
}

const appendOnly = (w: Workload) => w.retry === 0 && !w.truncateEvery && !w.toolsEvery && !w.duplicate;

const WORKLOADS: Workload[] = [
  { name: "werewolves, 3 wolves", agents: 3, calls: 30, system: 60, observation: [6, 16], output: [4, 10], retry: 0 },
  { name: "appworld", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0 },
  { name: "appworld, 10% of calls retried", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0.1 },
  { name: "appworld, history truncated every 8 turns", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0, truncateEvery: 8 },
  { name: "appworld, tool list changes every 8 turns", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0, toolsEvery: 8 },
  { name: "appworld, 20% repeated text under other ids", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0, duplicate: 0.2 },
];

const MERGE: MergeOptions = { match: "text", ignoreTools: true, overflow: "drop" };

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

function words(rand: () => number, chars: number): string {
  let s = "";
  while (s.length < chars) s += `${rand().toString(36).slice(2, 2 + 2 + Math.floor(rand() * 6))} `;
  return s.slice(0, chars);
}

const between = (rand: () => number, [lo, hi]: [number, number]) => lo + Math.floor(rand() * (hi - lo + 1));

/** One episode recorded as the tracker would: rendered per message, generations spliced by their ids. */
function recordWorkload(w: Workload, episodeId: string, seed: number): CallRecord[] {
  const tok = createEmbeddedTokenizer();
  const rand = rng(seed);
  const calls: CallRecord[] = [];
  for (let a = 0; a < w.agents; a++) {
    const agentId = `agent-${a}`;
    const generated = new Map<string, number[]>();
    let messages: ChatTurnMessage[] = [
      { role: "system", content: words(rand, w.system) },
      { role: "user", content: words(rand, between(rand, w.observation)) },
    ];
    let tools: ToolDefinition[] = [];
    let lastText: string | null = null;
    for (let seq = 0, turn = 0; turn < w.calls; seq++) {
      if (turn > 0 && w.truncateEvery && turn % w.truncateEvery === 0) messages = [messages[0]!, messages[messages.length - 1]!];
      if (w.toolsEvery && turn % w.toolsEvery === 0 && tools.length <= turn / w.toolsEvery) {
        tools = [...tools, { name: `tool_${tools.length}`, description: words(rand, 30) }];
      }
      const r = tok.renderChat(messages, tools.length > 0 ? { generated, tools } : { generated });
      const repeat: boolean = w.duplicate !== undefined && lastText !== null && rand() < w.duplicate;
      const text: string = repeat && lastText !== null ? lastText : words(rand, between(rand, w.output));
      const encoded = tok.encode(text);
      // A repeat is the same text under other ids: its first token differs.
      if (repeat) encoded[0] = encoded[0] === 50 ? 51 : 50;
      const outputIds = [...encoded, EMBEDDED_IDS.imEnd];
      lastText = text;
      calls.push({
        callId: `${episodeId}/${agentId}/${seq}`, episodeId, agentId, policy: "main", seq, messages: [], tools: tools.length > 0 ? [...tools] : null,
        segments: r.segments, headerIds: r.headerIds, outputIds, outputLogprobs: outputIds.map(() => -1 - rand()),
        outputText: text, finishReason: "stop", version: 0, startedAt: seq, latencyMs: 1,
      });
      if (rand() < w.retry) continue;
      turn++;
      generated.set(text, [...r.headerIds, ...outputIds]);
      messages = [...messages, { role: "assistant", content: text }, { role: "user", content: words(rand, between(rand, w.observation)) }];
    }
  }
  return calls;
}

function unmergedSamples(calls: readonly CallRecord[]): TrainSample[] {
  return calls.map((c) => {
    const prompt = [...c.segments.flatMap((s) => s.ids), ...c.headerIds];
    return {
      tokenIds: [...prompt, ...c.outputIds],
      lossMask: [...prompt.map(() => 0), ...c.outputIds.map(() => 1)],
      logprobs: [...prompt.map(() => 0), ...c.outputLogprobs],
      advantage: 1,
      weight: 1,
    };
  });
}

function asSamples(calls: readonly CallRecord[], stats?: (s: MergeStats) => void): Sample[] {
  const merged = mergeEpisodeCalls(calls, MERGE);
  stats?.(merged.stats);
  return merged.timelines.map((t, i) => ({
    sampleId: String(i), episodeId: t.episodeId, agentId: t.agentId, policy: t.policy, taskId: "t", env: "bench", group: "bench/t",
    tokenIds: t.tokenIds, lossMask: t.lossMask, logprobs: t.logprobs, versions: t.versions,
    reward: 1, advantage: 1, weight: 1, calls: t.callIds.length,
  }));
}

/** The ideal for append-only histories: each (episode, agent) trains once on its longest timeline. */
function idealTokens(calls: readonly CallRecord[]): number {
  const last = new Map<string, CallRecord>();
  for (const c of calls) last.set(`${c.episodeId}/${c.agentId}`, c);
  let n = 0;
  for (const c of last.values()) n += c.segments.reduce((a, s) => a + s.ids.length, 0) + c.headerIds.length + c.outputIds.length;
  return n;
}

async function timeTrain(samples: TrainSample[], context: number, runs: number): Promise<{ ms: number; loss: number }> {
  const times: number[] = [];
  let loss = Number.NaN;
  for (let r = 0; r < runs; r++) {
    const engine = createEmbeddedEngine({
      vocabSize: createEmbeddedTokenizer().vocabSize,
      model: EmbeddedModelSchema.parse({ layers: 1, dim: 16, heads: 2, context, seed: 3 }),
      optimizer: OptimizerSchema.parse({ microBatch: 64 }),
    });
    const t = performance.now();
    const m = await engine.train({ samples });
    times.push(performance.now() - t);
    loss = m.loss;
    await engine.close();
  }
  return { ms: median(times), loss };
}

export const bench: Bench = {
  name: "merge",
  async run({ quick, log }) {
    const episodes = quick ? 2 : 4;
    const trainRuns = quick ? 1 : 2;
    const tokens: BenchTable = {
      title: "Training tokens: one sample per call vs merged",
      columns: ["workload", "episodes", "turns per agent", "calls", "samples merged", "tokens unmerged", "tokens merged", "ideal", "compression", "ideal compression", "achieved / ideal", "prefix tree tokens", "tree saves", "text matches refused (ids differ)"],
      rows: [],
      notes: [],
    };
    const timing: BenchTable = {
      title: "Merge time vs the embedded train step (1 layer, dim 16; one agent's episode, same weights)",
      columns: ["workload", "merge ms (one agent's episode)", "train ms unmerged", "train ms merged", "train speed-up", "merge / merged train step", "loss unmerged", "loss merged"],
      rows: [],
      notes: [],
    };
    for (const [wi, full] of WORKLOADS.entries()) {
      const w = quick ? { ...full, calls: Math.ceil(full.calls / 2) } : full;
      const calls = Array.from({ length: episodes }, (_, e) => recordWorkload(w, `ep${e}`, 1000 * wi + e)).flat();
      let refused = 0;
      const merged = asSamples(calls, (st) => (refused = st.retokenizedSpans));
      const unmerged = unmergedSamples(calls);
      const tokU = unmerged.reduce((a, s) => a + s.tokenIds.length, 0);
      const tokM = merged.reduce((a, s) => a + s.tokenIds.length, 0);
      const ideal = idealTokens(calls);
      const tree = measurePrefixSavings(merged);
      const achieved = ideal / tokM;
      tokens.rows.push([
        w.name, episodes, w.calls, calls.length, merged.length, tokU, tokM, ideal, `${fmt(tokU / tokM)}x`, `${fmt(tokU / ideal)}x`,
        appendOnly(w) ? fmt(achieved) : "n/a (not append-only)", tree.treeTokens, `${fmt(100 * tree.saved)}%`, refused,
      ]);
      if (appendOnly(w)) tokens.notes!.push(`${w.name}: achieved/ideal ${fmt(achieved)} (target >= 0.95: ${achieved >= 0.95 ? "met" : "NOT met"})`);

      // The train step is timed on one trained agent of one episode; the merge on that same episode.
      const one = calls.filter((c) => c.episodeId === "ep0" && c.agentId === "agent-0");
      const mergeMs = median(await timeRuns(quick ? 20 : 200, () => mergeEpisodeCalls(one, MERGE), 5));
      const oneUnmerged = unmergedSamples(one);
      const context = Math.min(4096, Math.max(...oneUnmerged.map((s) => s.tokenIds.length)) + 1);
      log(`${w.name}: training ${oneUnmerged.length} unmerged vs merged samples of one agent (context ${context})`);
      const tu = await timeTrain(oneUnmerged, context, trainRuns);
      const tm = await timeTrain(buildTrainBatch(asSamples(one)).samples, context, trainRuns);
      const share = mergeMs / tm.ms;
      timing.rows.push([
        w.name, fmt(mergeMs), fmt(tu.ms), fmt(tm.ms), `${fmt(tu.ms / tm.ms)}x`, `${fmt(100 * share)}%`, fmt(tu.loss, 6), fmt(tm.loss, 6),
      ]);
      timing.notes!.push(`${w.name}: merge cost ${fmt(100 * share)}% of the merged train step (target < 1%: ${share < 0.01 ? "met" : "NOT met"})`);
      const same = Math.abs(tu.loss - tm.loss) <= 1e-6 * Math.max(1, Math.abs(tu.loss));
      timing.notes!.push(`${w.name}: merged loss ${same ? "equals" : "DIFFERS FROM"} the unmerged loss (${fmt(tm.loss, 6)} vs ${fmt(tu.loss, 6)})`);
    }
    tokens.notes!.push("compression = tokens unmerged / tokens merged; achieved / ideal = ideal tokens / merged tokens.");
    tokens.notes!.push("ideal: one sample per (episode, agent), its last call's full timeline (the floor for append-only histories).");
    tokens.notes!.push("truncated / tool-list / repeated-text workloads are not append-only: a changed context starts a new sample, and a text match over other ids is refused (last column), so every trained token keeps the context it was served in.");
    tokens.notes!.push("prefix tree: the merged samples packed into one token trie (shared prefixes once); measured only, not trained on. With retried calls it recovers most of the gap to the one-timeline floor.");
    return [tokens, timing];
  },
};
