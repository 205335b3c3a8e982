import type { PromptSegment } from "../tokenizers/tokenizer.ts";
import { promptLength } from "../tokenizers/prompt-ids.ts";
import type { CallRecord } from "../tracker/call-record.ts";

export interface MergeOptions {
  /** Compare messages by canonical `text` or by token `ids`. */
  match: "text" | "token";
  /**
   * How tool definitions are compared. Definitions that differ always start a new sample (earlier
   * outputs were generated under the tools they saw); `true` compares them as canonical JSON (key order
   * and formatting ignored), `false` exactly as sent.
   */
  ignoreTools: boolean;
  /**
   * `drop`: an overflowed call is left out, counted as an overflow; `keep`: passed on like any call. The
   * server records an overflowed call with no output, so under either it trains nothing (`keep` counts it as empty).
   */
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
  /**
   * Calls whose context matched a later call's by text but not by the served token ids (a re-tokenized
   * message, equal text generated as different ids): they start their own sample instead of merging.
   */
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
 * Whatever `match` says, a merge never changes a trained token's context: an absorbed call's prompt and
 * output are, id for id, a prefix of the timeline, and its tool definitions are the timeline's.
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
  const retokenized = new Set<number>();
  const timelines: MergedTimeline[] = [];
  for (let r = live.length - 1; r >= 0; r--) {
    if (absorbed.has(r)) continue;
    const root = live[r]!;
    const spans = new Map<number, CallRecord>();
    for (let i = r - 1; i >= 0; i--) {
      if (absorbed.has(i)) continue;
      const older = live[i]!;
      const at = older.segments.length;
      if (spans.has(at)) continue;
      const m = matchPrefix(older, root, options);
      if (m === "retokenized") retokenized.add(i);
      if (m !== "prefix") continue;
      spans.set(at, older);
      absorbed.add(i);
    }
    const t = buildTimeline(root, spans);
    timelines.push(t);
    stats.mergedTokens += t.tokenIds.length;
  }
  timelines.reverse();
  stats.timelines = timelines.length;
  for (const i of retokenized) if (!absorbed.has(i)) stats.retokenizedSpans++;
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

/**
 * Whether `older`'s prompt + output is a prefix of `root`'s context. Text matching compares messages by
 * text first and then confirms the ids: a text match over different ids ("retokenized") is no match,
 * since its tokens would train in a context no call was served.
 */
function matchPrefix(older: CallRecord, root: CallRecord, options: MergeOptions): "prefix" | "retokenized" | "none" {
  const n = older.segments.length;
  if (root.segments.length <= n) return "none";
  if (!sameTools(older.tools, root.tools, options.ignoreTools)) return "none";
  const reply = root.segments[n]!;
  if (reply.role !== "assistant") return "none";
  let textOnly = false;
  for (let k = 0; k < n; k++) {
    const a = older.segments[k]!;
    const b = root.segments[k]!;
    if (a === b) continue;
    if (a.role !== b.role) return "none";
    if (options.match === "text") {
      if (a.text !== b.text) return "none";
      if (!equalIds(a.ids, b.ids)) textOnly = true;
    } else if (!equalIds(a.ids, b.ids)) return "none";
  }
  if (options.match === "text" && reply.text !== older.outputText) return "none";
  const exact = startsWith(reply.ids, older.headerIds, 0) && startsWith(reply.ids, older.outputIds, older.headerIds.length);
  if (textOnly || !exact) return options.match === "text" ? "retokenized" : "none";
  return "prefix";
}

function buildTimeline(root: CallRecord, spans: ReadonlyMap<number, CallRecord>): MergedTimeline {
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
    // matchPrefix confirmed seg.ids = gen's header + output + the template's text after it.
    pushContext(t, gen.headerIds);
    pushGenerated(t, gen);
    pushContext(t, seg.ids.slice(gen.headerIds.length + gen.outputIds.length));
  });
  pushContext(t, root.headerIds);
  pushGenerated(t, root);
  return t;
}

function pushContext(t: MergedTimeline, ids: PromptSegment["ids"]): void {
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

function startsWith(ids: PromptSegment["ids"], prefix: PromptSegment["ids"], at: number): boolean {
  if (ids.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[at + i] !== prefix[i]) return false;
  return true;
}

function equalIds(a: PromptSegment["ids"], b: PromptSegment["ids"]): boolean {
  return a.length === b.length && startsWith(a, b, 0);
}

function sameTools(x: unknown[] | null, y: unknown[] | null, canonical: boolean): boolean {
  const a = x && x.length > 0 ? x : null;
  const b = y && y.length > 0 ? y : null;
  if (a === b) return true;
  return canonical ? canonicalJson(a) === canonicalJson(b) : JSON.stringify(a) === JSON.stringify(b);
}

/** JSON with object keys sorted, so that equal definitions sent in another key order compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}
