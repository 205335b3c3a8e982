import { type AddressInfo, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Judge, fillRubric } from "../../../sdk/rewards/judge.ts";
import { judgesWithoutEndpoint } from "../../../sdk/rewards/judge-endpoints.ts";
import { JudgePartSchema, RewardModelsSchema } from "../../../sdk/rewards/spec.ts";
import { parseRanking, parseVerdict, rankRewards } from "../../../sdk/rewards/verdict.ts";
import { type JudgeDouble, startJudgeDouble } from "../../helpers/judge-double.ts";

let judge: JudgeDouble;
beforeAll(async () => {
  // Grades like a judge model: reasoning, then "Score: N" (10 when the transcript holds the reference answer).
  judge = await startJudgeDouble((prompt) => {
    if (prompt.includes("### Trajectory")) {
      // Group rubric: rank trajectories by how many times they say "yes", best first.
      const parts = prompt.split("### Trajectory ").slice(1);
      const scored = parts.map((p) => ({ n: Number(p.split("\n")[0]), yes: (p.match(/yes/g) ?? []).length }));
      scored.sort((a, b) => b.yes - a.yes || a.n - b.n);
      return `Comparing them, the ranking is:\n${JSON.stringify(scored.map((s) => s.n))}`;
    }
    const reference = /Reference: (.*)/.exec(prompt)?.[1] ?? "";
    const transcript = /Transcript:\n([\s\S]*)\nGrade/.exec(prompt)?.[1] ?? "";
    return `The reply ${transcript.includes(reference) ? "matches" : "misses"} the reference.\nScore: ${transcript.includes(reference) ? 10 : 2}`;
  });
});
afterAll(() => judge.close());

const RUBRIC = "Task: {{task}}\nReference: {{reference}}\nTranscript:\n{{transcript}}\nGrade from 0 to 10, last line 'Score: N'.";
const part = (over: Record<string, unknown> = {}) =>
  JudgePartSchema.parse({ name: "judge", kind: "judge", model: "judge-7b", baseUrl: judge.baseUrl, rubric: RUBRIC, retries: 2, timeoutMs: 10_000, ...over });

describe("LLM judges", () => {
  it("fills the rubric, asks the model, and reads its verdict as a share of the range", async () => {
    const j = new Judge(part(), RUBRIC, { env: { AGENTJET_JUDGE_API_KEY: "sk-judge" } });
    const good = await j.scoreEpisode({ task: "2+2?", reference: "4", transcript: "assistant: 4" });
    expect(good).toMatchObject({ share: 1, tries: 1 });
    expect(good.raw).toContain("Score: 10");
    const bad = await j.scoreEpisode({ task: "2+2?", reference: "4", transcript: "assistant: 5" });
    expect(bad.share).toBeCloseTo(0.2);
    const sent = judge.requests.at(-1)!;
    expect(sent).toMatchObject({ model: "judge-7b", authorization: "Bearer sk-judge" });
    expect(sent.prompt).toContain("Task: 2+2?\nReference: 4\nTranscript:\nassistant: 5");
  });

  it("retries malformed verdicts, HTTP errors and timeouts, then fails as an infrastructure error (never a 0)", async () => {
    const j = new Judge(part({ timeoutMs: 1_000 }), RUBRIC, { env: {}, backoff: { baseMs: 10, maxMs: 20, jitter: 0.5, retryAfterMaxMs: 20 } });
    judge.script.push("malformed", "http-500");
    const v = await j.scoreEpisode({ task: "a", reference: "x", transcript: "x" });
    expect(v).toMatchObject({ share: 1, tries: 3 });

    judge.script.push("hang", "malformed", "malformed");
    await expect(j.scoreEpisode({ task: "b", reference: "y", transcript: "y" })).rejects.toMatchObject({ code: "AJ_ERR_JUDGE_VERDICT" });
    judge.script.push("hang", "hang", "hang");
    const timedOut = j.scoreEpisode({ task: "c", reference: "y", transcript: "y" });
    await expect(timedOut).rejects.toMatchObject({ code: "AJ_ERR_JUDGE_FAILED" });
    // Says which endpoint and the limit, not fetch's bare "The operation was aborted due to timeout".
    await expect(timedOut).rejects.toThrow(`no answer from ${judge.baseUrl}/chat/completions within timeoutMs 1000`);
  });

  it("an endpoint that refuses connections is named, with the cause, not fetch's bare 'fetch failed'", async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const { port } = probe.address() as AddressInfo;
    await new Promise((r) => probe.close(r));
    const j = new Judge(part({ baseUrl: `http://127.0.0.1:${port}/v1`, retries: 0 }), RUBRIC, { env: {} });
    await expect(j.scoreEpisode({ task: "t", reference: "", transcript: "" })).rejects.toThrow(
      `gave no verdict in 1 tries: http://127.0.0.1:${port}/v1/chat/completions: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it("caches verdicts by content hash: the same prompt is asked once", async () => {
    const j = new Judge(part(), RUBRIC, { env: {} });
    const before = judge.requests.length;
    await j.scoreEpisode({ task: "same", reference: "1", transcript: "1" });
    await j.scoreEpisode({ task: "same", reference: "1", transcript: "1" });
    expect(judge.requests.length - before).toBe(1);
  });

  it("says what is missing when no endpoint is set", async () => {
    const j = new Judge(part({ baseUrl: undefined, retries: 0 }), RUBRIC, { env: {} });
    await expect(j.scoreEpisode({ task: "t", reference: "", transcript: "" })).rejects.toThrow(/AGENTJET_JUDGE_BASE_URL/);
  });

  it("parses number, label and JSON verdicts; out-of-scale numbers are malformed", () => {
    expect(parseVerdict("reasoning 3 things\nScore: 7", { kind: "number", min: 0, max: 10 })).toBeCloseTo(0.7);
    expect(parseVerdict("Score: 12", { kind: "number", min: 0, max: 10 })).toBeNull();
    expect(parseVerdict("no digits", { kind: "number", min: 0, max: 10 })).toBeNull();
    const labels = { kind: "label" as const, labels: { correct: 1, partial: 0.5, wrong: 0 } };
    expect(parseVerdict("Not wrong, I'd say partial... final: CORRECT", labels)).toBe(1);
    expect(parseVerdict("incorrectly formatted", labels)).toBeNull(); // "correct" inside a word does not count
    expect(parseVerdict('Thoughts {"draft": 1}. Final {"score": 8, "why": "ok"}', { kind: "json", field: "score", min: 0, max: 10 })).toBeCloseTo(0.8);
    expect(parseVerdict('{"score": "high"}', { kind: "json", field: "score", min: 0, max: 10 })).toBeNull();
    expect(fillRubric("{{task}} / {{ reference }} / {{unknown}}", { task: "T", reference: "R" })).toBe("T / R / {{unknown}}");
  });
});

describe("group-relative judging", () => {
  it("ranks map to rewards as documented: rank r of n earns min + (max - min) * (n - r) / (n - 1)", () => {
    expect(rankRewards([3, 1, 4, 2], { min: 0, max: 1 })).toEqual([2 / 3, 0, 1, 1 / 3]);
    expect(rankRewards([2, 1], { min: -1, max: 1 })).toEqual([-1, 1]);
    expect(rankRewards([1], { min: 0, max: 1 })).toEqual([1]);
    expect(parseRanking("first [1, 2] then final [2, 3, 1]", 3)).toEqual([2, 3, 1]);
    expect(parseRanking("[1, 1, 2]", 3)).toBeNull();
    expect(parseRanking("[1, 2]", 3)).toBeNull();
  });

  it("the judge sees all n trajectories at once and ranks them", async () => {
    const j = new Judge(part({ scope: "group", rubric: "Rank {{n}} replies to {{task}}:\n{{trajectories}}" }), "Rank {{n}} replies to {{task}}:\n{{trajectories}}", { env: {} });
    const v = await j.rankGroup({ task: "say yes", reference: "", transcripts: ["no", "yes yes yes", "yes", "yes yes"] });
    expect(v.ranking).toEqual([2, 4, 3, 1]);
    expect(judge.requests.at(-1)!.prompt).toContain("Rank 4 replies to say yes:\n### Trajectory 1\nno");
    expect(rankRewards(v.ranking!, { min: 0, max: 1 })).toEqual([0, 1, 1 / 3, 2 / 3]);
  });
});

// Regression: a judge without an endpoint failed every episode it scored, retried about 1,000 times in a
// 25-second run; train and agentjet client now refuse to start with it (judgesWithoutEndpoint).
describe("judgesWithoutEndpoint", () => {
  const spec = RewardModelsSchema.parse({
    parts: [
      { name: "style", kind: "judge", model: "m", rubric: "Rate {{transcript}}" },
      { name: "facts", kind: "judge", model: "m", rubric: "Rate {{transcript}}", baseUrl: "http://127.0.0.1:9/v1" },
    ],
    combine: { kind: "sum", weights: { env: 1, style: 1, facts: 1 } },
  });
  it("names the judges of a scope that have neither baseUrl nor $AGENTJET_JUDGE_BASE_URL", () => {
    expect(judgesWithoutEndpoint(spec, "episode", {})).toEqual(["style"]);
    expect(judgesWithoutEndpoint(spec, "group", {})).toEqual([]);
    expect(judgesWithoutEndpoint(spec, "episode", { AGENTJET_JUDGE_BASE_URL: "http://judge/v1" })).toEqual([]);
    expect(judgesWithoutEndpoint(undefined, "episode", {})).toEqual([]);
  });
});
