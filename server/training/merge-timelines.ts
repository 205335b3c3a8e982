import type { PromptSegment } from "../tokenizers/tokenizer.ts";
import type { CallRecord } from "../tracker/call-record.ts";

export interface MergeOptions {
  /** Compare messages by canonical `text` or by token `ids`. */
  match: "text" | "token";
  /** When true, differing tool definitions do not break a match. */
  ignoreTools: boolean;
  /** `drop`: an overflowed call is left out (counted); `keep`: merged like any other call. */
  overflow: "drop" | "keep";
}

/** One training sequence built from one or more calls of one (episode, agent). */
export interface MergedTimeline {
  episodeId: string;
  agentId: string;
  policy: string;
  tokenIds: number[];
  lossMask: number[];
  logprobs: number[];
  versions: number[];
  /** The calls whose generated spans this timeline carries, oldest first. */
  callIds: string[];
}

export interface MergeStats {
  calls: number;
  timelines: number;
  overflowDropped: number;
  /** Calls left out because they generated nothing (nothing to learn; an overflow usually). */
  emptyDropped: number;
  /** Text matches whose context ids differed from the earlier call's generated ids. */
  retokenizedSpans: number;
  /** Tokens the engine would process with one sample per call. */
  unmergedTokens: number;
  mergedTokens: number;
}

export interface MergeResult {
  timelines: MergedTimeline[];
  stats: MergeStats;
}

/**
 * Merges the calls of ONE (episode, agent). Newest call first, a timeline absorbs every older call whose
 * context plus output is a message-wise prefix of its own context; the absorbed call's generated ids and
 * log-probs fill its span. A call nothing absorbs starts its own timeline. A call that generated nothing
 * is counted and left out: it has nothing to learn, and an overflowed context is too long to train on.
 */
export function mergeTimelines(calls: readonly CallRecord[], options: MergeOptions): MergeResult {
  const ordered = [...calls].sort((a, b) => a.seq - b.seq);
  const stats: MergeStats = {
    calls: ordered.length,
    timelines: 0,
    overflowDropped: 0,
    emptyDropped: 0,
    retokenizedSpans: 0,
    unmergedTokens: 0,
    mergedTokens: 0,
  };
  const live: CallRecord[] = [];
  for (const c of ordered) {
    if (c.finishReason === "overflow" && options.overflow === "drop") stats.overflowDropped++;
    else if (c.outputIds.length === 0) stats.emptyDropped++;
    else {
      live.push(c);
      stats.unmergedTokens += promptLength(c) + c.outputIds.length;
    }
  }

  const absorbed = new Set<number>();
  const timelines: MergedTimeline[] = [];
  for (let r = live.length - 1; r >= 0; r--) {
    if (absorbed.has(r)) continue;
    const root = live[r]!;
    const spans = new Map<number, CallRecord>();
    for (let i = r - 1; i >= 0; i--) {
      if (absorbed.has(i)) continue;
      const older = live[i]!;
      const at = older.segments.length;
      if (spans.has(at) || !isPrefixTimeline(older, root, options)) continue;
      spans.set(at, older);
      absorbed.add(i);
    }
    const t = buildTimeline(root, spans, stats);
    timelines.push(t);
    stats.mergedTokens += t.tokenIds.length;
  }
  timelines.reverse();
  stats.timelines = timelines.length;
  return { timelines, stats };
}

/** Merges every (episode, agent) found in `calls`, keeping agents apart. */
export function mergeEpisodeCalls(calls: readonly CallRecord[], options: MergeOptions): MergeResult {
  const byAgent = new Map<string, CallRecord[]>();
  for (const c of calls) {
    const key = `${c.episodeId}\u0000${c.agentId}`;
    const list = byAgent.get(key);
    if (list) list.push(c);
    else byAgent.set(key, [c]);
  }
  const out: MergeResult = { timelines: [], stats: createMergeStats() };
  for (const list of byAgent.values()) {
    const r = mergeTimelines(list, options);
    out.timelines.push(...r.timelines);
    addMergeStats(out.stats, r.stats);
  }
  return out;
}

export function createMergeStats(): MergeStats {
  return { calls: 0, timelines: 0, overflowDropped: 0, emptyDropped: 0, retokenizedSpans: 0, unmergedTokens: 0, mergedTokens: 0 };
}

export function addMergeStats(into: MergeStats, s: MergeStats): void {
  into.calls += s.calls;
  into.timelines += s.timelines;
  into.overflowDropped += s.overflowDropped;
  into.emptyDropped += s.emptyDropped;
  into.retokenizedSpans += s.retokenizedSpans;
  into.unmergedTokens += s.unmergedTokens;
  into.mergedTokens += s.mergedTokens;
}

function promptLength(c: CallRecord): number {
  let n = c.headerIds.length;
  for (const s of c.segments) n += s.ids.length;
  return n;
}

function isPrefixTimeline(older: CallRecord, root: CallRecord, options: MergeOptions): boolean {
  const n = older.segments.length;
  if (root.segments.length <= n) return false;
  if (!options.ignoreTools && !sameJson(older.tools, root.tools)) return false;
  for (let k = 0; k < n; k++) {
    if (!sameSegment(older.segments[k]!, root.segments[k]!, options.match)) return false;
  }
  const reply = root.segments[n]!;
  if (reply.role !== "assistant") return false;
  if (options.match === "text") return reply.text === older.outputText;
  return startsWith(reply.ids, older.headerIds, 0) && startsWith(reply.ids, older.outputIds, older.headerIds.length);
}

function sameSegment(a: PromptSegment, b: PromptSegment, match: MergeOptions["match"]): boolean {
  if (a === b) return true;
  if (a.role !== b.role) return false;
  return match === "text" ? a.text === b.text : equalIds(a.ids, b.ids);
}

function buildTimeline(root: CallRecord, spans: ReadonlyMap<number, CallRecord>, stats: MergeStats): MergedTimeline {
  const t: MergedTimeline = {
    episodeId: root.episodeId,
    agentId: root.agentId,
    policy: root.policy,
    tokenIds: [],
    lossMask: [],
    logprobs: [],
    versions: [],
    callIds: [],
  };
  root.segments.forEach((seg, k) => {
    const gen = spans.get(k);
    if (!gen) {
      pushContext(t, seg.ids);
      return;
    }
    pushContext(t, gen.headerIds);
    pushGenerated(t, gen);
    const genLength = gen.headerIds.length + gen.outputIds.length;
    const exact = startsWith(seg.ids, gen.headerIds, 0) && startsWith(seg.ids, gen.outputIds, gen.headerIds.length);
    if (exact) pushContext(t, seg.ids.slice(genLength));
    else stats.retokenizedSpans++;
  });
  pushContext(t, root.headerIds);
  pushGenerated(t, root);
  return t;
}

function pushContext(t: MergedTimeline, ids: readonly number[]): void {
  for (const id of ids) {
    t.tokenIds.push(id);
    t.lossMask.push(0);
    t.logprobs.push(0);
    t.versions.push(-1);
  }
}

function pushGenerated(t: MergedTimeline, c: CallRecord): void {
  for (let i = 0; i < c.outputIds.length; i++) {
    t.tokenIds.push(c.outputIds[i]!);
    t.lossMask.push(1);
    t.logprobs.push(c.outputLogprobs[i] ?? 0);
    t.versions.push(c.version);
  }
  t.callIds.push(c.callId);
}

function startsWith(ids: readonly number[], prefix: readonly number[], at: number): boolean {
  if (ids.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[at + i] !== prefix[i]) return false;
  return true;
}

function equalIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && startsWith(a, b, 0);
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
