import { cpus, loadavg } from "node:os";
import { EmbeddedModelSchema, OptimizerSchema } from "../server/config/index.ts";
import { createEmbeddedEngine, TREE_CONTEXTS_PER_PACK, toModelShape, treeBudget } from "../server/engines/embedded/index.ts";
import { type ChatTurnMessage, createEmbeddedTokenizer, EMBEDDED_IDS, promptIds, type ToolDefinition } from "../server/tokenizers/index.ts";
import type { CallRecord } from "../server/tracker/index.ts";
import {
  buildTrainBatch,
  chainCost,
  computeDepths,
  measurePackSavings,
  measurePrefixSavings,
  mergeEpisodeCalls,
  type MergeOptions,
  type MergeStats,
  packPrefixTrees,
  type Sample,
  type TrainSample,
} from "../server/training/index.ts";
import { type Bench, type BenchTable, fmt, median, timeRuns } from "./harness.ts";

/**
 * Timeline merging on multi-turn workloads (char-level embedded tokenizer, so tokens ~ characters):
 * training tokens one-sample-per-call vs merged, against the ideal (one sample per (episode, agent) for
 * append-only histories) and the prefix-tree ideal (the merged samples in one trie); merge time per
 * episode; the embedded engine's train step on unmerged, merged (flat) and prefix-tree-packed batches.
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
  /** Episodes per task (`n > 1` samples of one prompt): they share the system and first user message. */
  branches?: number;
}

const appendOnly = (w: Workload) => w.retry === 0 && !w.truncateEvery && !w.toolsEvery && !w.duplicate && (w.branches ?? 1) === 1;
/** Workloads whose samples branch (retries, n > 1): the tree-training targets apply. */
const branching = (w: Workload) => w.retry > 0 || (w.branches ?? 1) > 1;

/**
 * GRPO with n > 1 on a tool-calling task: n completions of one long prompt. Its shape is tau-bench
 * retail's (sierra-research/tau-bench, tau_bench/envs/retail: the agent's system prompt is the policy
 * wiki, 5,718 characters, and it gets 16 tool schemas of about 12,300 characters, ~4.5k BPE tokens in all
 * at ~4 characters a token), scaled to a 2,000-token prompt so that it trains within the engine's
 * 4,096-token context in bench time; the task's user message is 100-300 tokens, a completion (brief
 * reasoning and a tool call, or a reply) 100-400.
 */
const TOOL_PROMPT = { agents: 1, system: 2000, observation: [100, 300] as [number, number], output: [100, 400] as [number, number], retry: 0, branches: 4 };

const WORKLOADS: Workload[] = [
  { name: "werewolves, 3 wolves", agents: 3, calls: 30, system: 60, observation: [6, 16], output: [4, 10], retry: 0 },
  { name: "appworld", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0 },
  { name: "appworld, 10% of calls retried", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0.1 },
  { name: "appworld, history truncated every 8 turns", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0, truncateEvery: 8 },
  { name: "appworld, tool list changes every 8 turns", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0, toolsEvery: 8 },
  { name: "appworld, 20% repeated text under other ids", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0, duplicate: 0.2 },
  { name: "appworld, n=4 samples per task", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0, branches: 4 },
  { name: "appworld, n=4, 10% of calls retried", agents: 1, calls: 25, system: 100, observation: [10, 24], output: [8, 20], retry: 0.1, branches: 4 },
  { name: "werewolves, 3 wolves, 10% of calls retried", agents: 3, calls: 30, system: 60, observation: [6, 16], output: [4, 10], retry: 0.1 },
  { name: "tool calling, n=4 completions of a 2k-token prompt", calls: 1, ...TOOL_PROMPT },
  { name: "tool calling, n=4, 2 turns from a 2k-token prompt", calls: 2, ...TOOL_PROMPT, observation: [100, 300], output: [60, 200] },
];

/** Micro-batch of every flat train step here (the optimizer's default). */
const MICRO_BATCH = OptimizerSchema.parse({}).microBatch;

/**
 * The model the train steps run (and whose `treeBudget` sizes the tries), at a given context: the
 * embedded engine's default shape (2 layers, dim 64, 4 heads).
 */
const model = (context: number) => EmbeddedModelSchema.parse({ context, seed: 3 });
/**
 * The one-layer dim-16 model this bench timed before, kept for comparison. With one layer, a query whose
 * output carries no loss needs no attention backward at all, so the flat path skips most of a retried
 * copy's backward there, which two layers cannot (the first layer's keys feed the second's loss tokens).
 */
const toyModel = (context: number) => EmbeddedModelSchema.parse({ layers: 1, dim: 16, heads: 2, context, seed: 3 });
type ModelOptions = ReturnType<typeof model>;

/** `BENCH_MERGE_ONLY`: a regular expression; only the workloads whose names match run. */
const ONLY = process.env.BENCH_MERGE_ONLY ? new RegExp(process.env.BENCH_MERGE_ONLY) : null;

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

/**
 * Episode e's seed: 1000·workload plus e scrambled (murmur3's finalizer, 0 for episode 0), because
 * seeds in a row draw nearly equal first numbers: one task's n completions would have equal lengths.
 */
function episodeSeed(workload: number, e: number): number {
  let h = e >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (1000 * workload + (h ^ (h >>> 16))) >>> 0;
}

const between = (rand: () => number, [lo, hi]: [number, number]) => lo + Math.floor(rand() * (hi - lo + 1));

/**
 * One episode recorded as the tracker would: rendered per message, generations spliced by their ids.
 * The task's prompt (system and first user message) comes from `taskSeed`, the rest from `seed`.
 */
function recordWorkload(w: Workload, episodeId: string, seed: number, taskSeed: number): CallRecord[] {
  const tok = createEmbeddedTokenizer();
  const rand = rng(seed);
  const taskRand = rng(taskSeed);
  const calls: CallRecord[] = [];
  for (let a = 0; a < w.agents; a++) {
    const agentId = `agent-${a}`;
    const generated = new Map<string, number[]>();
    let messages: ChatTurnMessage[] = [
      { role: "system", content: words(taskRand, w.system) },
      { role: "user", content: words(taskRand, between(taskRand, w.observation)) },
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
    const prompt = promptIds(c);
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

const budgetOf = (shape: ModelOptions) => treeBudget(toModelShape(createEmbeddedTokenizer().vocabSize, shape));

/** The flat samples' cost over their tries' under the engine's cost model: what a tree step can gain at most. */
function workRatio(samples: readonly TrainSample[], shape: ModelOptions): number {
  const budget = budgetOf(shape);
  const flat = samples.reduce((a, x) => a + chainCost(budget.nodeCost, x.tokenIds.length), 0);
  const tree = packPrefixTrees(samples, budget).reduce(
    (a, p) => a + budget.nodeCost * p.tree.treeTokens + computeDepths(p.tree).reduce((b, d) => b + d + 1, 0),
    0,
  );
  return flat / tree;
}

async function trainOnce(samples: TrainSample[], shape: ModelOptions, prefixTree: boolean): Promise<{ ms: number; loss: number }> {
  const engine = createEmbeddedEngine({
    vocabSize: createEmbeddedTokenizer().vocabSize,
    model: shape,
    optimizer: OptimizerSchema.parse({ microBatch: MICRO_BATCH }),
  });
  // CPU time (user + system) of the step: steadier than wall time on cores that others share.
  const t = process.cpuUsage();
  const m = await engine.train(prefixTree ? { samples, prefixTree } : { samples });
  const used = process.cpuUsage(t);
  const ms = (used.user + used.system) / 1000;
  await engine.close();
  return { ms, loss: m.loss };
}

/**
 * Median train step of each path over `runs` runs, the paths alternating run by run so that a change
 * in the machine's load falls on both (other engineers share its cores).
 */
async function timeTrain(samples: TrainSample[], shape: ModelOptions, runs: number, paths: readonly boolean[]): Promise<Array<{ ms: number; loss: number }>> {
  const times = paths.map((): number[] => []);
  const loss = paths.map(() => Number.NaN);
  for (let r = 0; r < runs; r++) {
    for (const [k, prefixTree] of paths.entries()) {
      const m = await trainOnce(samples, shape, prefixTree);
      times[k]!.push(m.ms);
      loss[k] = m.loss;
    }
  }
  return paths.map((_, k) => ({ ms: median(times[k]!), loss: loss[k]! }));
}

export const bench: Bench = {
  name: "merge",
  async run({ quick, log }) {
    const episodes = quick ? 2 : 4;
    const trainRuns = quick ? 1 : 5;
    const loadAtStart = loadavg()[0]!;
    // Warm the JIT on both train paths before anything is timed.
    const warm = unmergedSamples(recordWorkload(WORKLOADS[2]!, "warm", 1, 2)).slice(0, 4);
    await timeTrain(warm, model(4096), 1, [false, true]);
    await timeTrain(warm, toyModel(4096), 1, [false, true]);
    const tokens: BenchTable = {
      title: "Training tokens: one sample per call vs merged vs prefix tries",
      columns: [
        "workload", "episodes", "turns per agent", "calls", "samples merged", "tokens unmerged", "tokens merged", "ideal", "compression",
        "ideal compression", "achieved / ideal", "tree ideal (one trie)", "tree trained (packed tries)", "merged / tree ideal",
        "trained / tree ideal", "text matches refused (ids differ)",
      ],
      rows: [],
      notes: [],
    };
    const timing: BenchTable = {
      title: "Merge time vs the embedded train step (the engine's default model: 2 layers, dim 64, 4 heads; one task's first agent, same weights)",
      columns: [
        "workload", "samples", "merge ms (one agent's episode)", "train ms unmerged", "train ms merged", "train ms tree", "merged / unmerged speed-up",
        "tree / merged speed-up", "work ratio merged / tree (ceiling)", "tree / merged speed-up, 1 layer dim 16", "merge / merged train step",
        "loss unmerged", "loss merged", "loss tree",
      ],
      rows: [],
      notes: [],
    };
    for (const [wi, full] of WORKLOADS.entries()) {
      if (ONLY && !ONLY.test(full.name)) continue;
      const w = quick ? { ...full, calls: Math.ceil(full.calls / 2) } : full;
      const n = w.branches ?? 1;
      const calls = Array.from({ length: episodes }, (_, e) => recordWorkload(w, `ep${e}`, episodeSeed(wi, e), 1000 * wi + 500 + Math.floor(e / n))).flat();
      let refused = 0;
      const merged = asSamples(calls, (st) => (refused = st.retokenizedSpans));
      const unmerged = unmergedSamples(calls);
      const tokU = unmerged.reduce((a, s) => a + s.tokenIds.length, 0);
      const tokM = merged.reduce((a, s) => a + s.tokenIds.length, 0);
      const ideal = idealTokens(calls);
      const treeIdeal = measurePrefixSavings(merged).treeTokens;
      // What the engine packs: tries within the cost of two full-context samples of the timed model.
      const batchContext = Math.min(4096, Math.max(...unmerged.map((s) => s.tokenIds.length)) + 1);
      const treeTrained = measurePackSavings(packPrefixTrees(merged, budgetOf(model(batchContext)))).treeTokens;
      const achieved = ideal / tokM;
      tokens.rows.push([
        w.name, episodes, w.calls, calls.length, merged.length, tokU, tokM, ideal, `${fmt(tokU / tokM)}x`, `${fmt(tokU / ideal)}x`,
        appendOnly(w) ? fmt(achieved) : "n/a (not append-only)", treeIdeal, treeTrained, `${fmt(tokM / treeIdeal)}x`,
        `${fmt(treeTrained / treeIdeal)}x`, refused,
      ]);
      if (appendOnly(w)) tokens.notes!.push(`${w.name}: achieved/ideal ${fmt(achieved)} (target >= 0.95: ${achieved >= 0.95 ? "met" : "NOT met"})`);
      if (branching(w)) {
        const r = treeTrained / treeIdeal;
        tokens.notes!.push(`${w.name}: tree-trained tokens ${fmt(r)}x the tree ideal (target <= 1.1x: ${r <= 1.1 ? "met" : "NOT met"})`);
      }

      // The train step is timed on the first agent of the first task's episodes (one episode when n = 1);
      // the merge on the first of those episodes.
      const group = new Set(Array.from({ length: n }, (_, e) => `ep${e}`));
      const one = calls.filter((c) => group.has(c.episodeId) && c.agentId === "agent-0");
      const first = one.filter((c) => c.episodeId === "ep0");
      const mergeMs = median(await timeRuns(quick ? 20 : 200, () => mergeEpisodeCalls(first, MERGE), 5));
      const oneUnmerged = unmergedSamples(one);
      const oneMerged = buildTrainBatch(asSamples(one)).samples;
      const context = Math.min(4096, Math.max(...oneUnmerged.map((s) => s.tokenIds.length)) + 1);
      log(`${w.name}: training ${oneUnmerged.length} unmerged, ${oneMerged.length} merged samples flat and as tries (context ${context})`);
      const tu = (await timeTrain(oneUnmerged, model(context), 1, [false]))[0]!;
      const paired = await timeTrain(oneMerged, model(context), trainRuns, [false, true]);
      const tm = paired[0]!;
      const tt = paired[1]!;
      const toy = await timeTrain(oneMerged, toyModel(context), trainRuns, [false, true]);
      const toySpeedup = toy[0]!.ms / toy[1]!.ms;
      const ceiling = workRatio(oneMerged, model(context));
      const share = mergeMs / tm.ms;
      const speedup = tm.ms / tt.ms;
      timing.rows.push([
        w.name, oneMerged.length, fmt(mergeMs), fmt(tu.ms), fmt(tm.ms), fmt(tt.ms), `${fmt(tu.ms / tm.ms)}x`, `${fmt(speedup)}x`, `${fmt(ceiling)}x`,
        `${fmt(toySpeedup)}x`, `${fmt(100 * share)}%`, fmt(tu.loss, 6), fmt(tm.loss, 6), fmt(tt.loss, 6),
      ]);
      timing.notes!.push(`${w.name}: merge cost ${fmt(100 * share)}% of the merged train step (target < 1%: ${share < 0.01 ? "met" : "NOT met"})`);
      if (branching(w)) {
        const verdict =
          ceiling < 2
            ? `does not apply: the work ceiling is ${fmt(ceiling)}x, below 2x by construction`
            : speedup >= 2 ? "met" : `NOT met (ceiling ${fmt(ceiling)}x)`;
        const tokenRatio = oneMerged.reduce((a, x) => a + x.tokenIds.length, 0) / measurePackSavings(packPrefixTrees(oneMerged, budgetOf(model(context)))).treeTokens;
        timing.notes!.push(
          `${w.name}: timed batch's tokens flat / tries ${fmt(tokenRatio)}x, work ceiling ${fmt(ceiling)}x, tree train step ${fmt(speedup)}x faster than flat merged (target >= 2x: ${verdict}); 1 layer dim 16: ${fmt(toySpeedup)}x`,
        );
      }
      if (appendOnly(w)) {
        timing.notes!.push(`${w.name}: tree train step ${fmt(speedup)}x the flat merged speed (target: no slower, >= 1x within noise; 1 layer dim 16: ${fmt(toySpeedup)}x)`);
      }
      const close = (a: number, b: number) => Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(a));
      timing.notes!.push(
        `${w.name}: merged loss ${close(tu.loss, tm.loss) ? "equals" : "DIFFERS FROM"} the unmerged loss, tree loss ${close(tm.loss, tt.loss) ? "equals" : "DIFFERS FROM"} the merged loss (${fmt(tu.loss, 6)}, ${fmt(tm.loss, 6)}, ${fmt(tt.loss, 6)})`,
      );
    }
    tokens.notes!.push("compression = tokens unmerged / tokens merged; achieved / ideal = ideal tokens / merged tokens.");
    tokens.notes!.push("ideal: one sample per (episode, agent), its last call's full timeline (the floor for append-only histories).");
    tokens.notes!.push("truncated / tool-list / repeated-text workloads are not append-only: a changed context starts a new sample, and a text match over other ids is refused (last column), so every trained token keeps the context it was served in.");
    tokens.notes!.push(`tree ideal: all merged samples of the batch in one token trie; tree trained: what \`merging.prefixTree\` trains: samples ordered by their tokens, those sharing a prefix in one trie, split where they share least when a trie would cost more than ${TREE_CONTEXTS_PER_PACK} full-context samples of the timed model (\`treeBudget\`; context = the longest call + 1).`);
    tokens.notes!.push("n=4: four episodes of one task share its system and first user message (GRPO's n > 1 samples of one prompt). The appworld n=4 rows are prompt-light (a 100-token system prompt under 25-turn histories of ~1,400 tokens: the branches share under a tenth of their tokens); the tool-calling rows have GRPO's usual agentic shape, a long shared prompt (tau-bench retail's system prompt and tool schemas, scaled to 2,000 tokens) and one or two short turns per completion.");
    timing.notes!.push(`machine: ${cpus().length} cores, 1-minute load average ${fmt(loadAtStart)} at the start, ${fmt(loadavg()[0]!)} at the end (the cores are shared: compare the ratios, not the ms).`);
    timing.notes!.push(`train ms: median CPU time (user + system, steadier than wall time on shared cores) of one \`engine.train\` (one epoch, one Adam step) on the same samples and initial weights, ${trainRuns} runs each for merged and tree, alternating run by run (tree = \`prefixTree: true\`), 1 run unmerged; both paths warmed first.`);
    timing.notes!.push("work ratio (ceiling): the flat samples' cost over the tries' under the engine's cost model (`treeBudget`: attention entries plus a per-token weight), the speed-up a tree step can reach; the target >= 2x applies where it is at least 2x. Each shared token is computed once, but a token's attention still spans its whole path: a branch late in a long history saves its prefix's tokens, not its own attention, so where attention dominates the speed-up trails the token ratio.");
    timing.notes!.push("1 layer dim 16: the same paired runs on the model this bench timed before. Both paths skip the attention backward of queries whose output has no gradient; with one layer that is every token whose next token is not trained, so the flat path skips most of a retried copy's backward (its prefix carries no loss: the merge trains each output once) and the tree's speed-up there falls below the work ratio. From two layers on the first layer's keys feed the last one's loss tokens, and the flat path computes every copy's backward.");
    return [tokens, timing];
  },
};
