import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Judge } from "../../../sdk/rewards/judge.ts";
import { isRetryableStatus, JUDGE_BACKOFF, type JudgeBackoff, parseRetryAfter, retryDelayMs, sleep } from "../../../sdk/rewards/judge-retries.ts";
import { JudgePartSchema } from "../../../sdk/rewards/spec.ts";
import { type JudgeDouble, startJudgeDouble } from "../../helpers/judge-double.ts";

let judge: JudgeDouble;
beforeAll(async () => {
  judge = await startJudgeDouble(() => "Looks right.\nScore: 8");
});
afterAll(() => judge.close());

const RUBRIC = "Grade {{transcript}} from 0 to 10.";
const part = (over: Record<string, unknown> = {}) =>
  JudgePartSchema.parse({ name: "judge", kind: "judge", model: "judge-7b", baseUrl: judge.baseUrl, rubric: RUBRIC, retries: 2, timeoutMs: 10_000, ...over });
let asked = 0;
/** A fresh prompt per call: verdicts are cached by prompt. */
const slots = () => ({ task: "t", reference: "", transcript: `reply ${++asked}` });
/** The waits a judge asked for, without waiting them. */
const recorded = () => {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
};
const NO_JITTER: JudgeBackoff = { baseMs: 100, maxMs: 1_000, jitter: 0, retryAfterMaxMs: 5_000 };

describe("judge retries: what is worth another try", () => {
  it("a 429 with Retry-After waits as long as the judge asks, then gets the verdict", async () => {
    const { waits, sleep } = recorded();
    const j = new Judge(part(), RUBRIC, { env: {}, backoff: NO_JITTER, sleep });
    judge.script.push({ status: 429, headers: { "retry-after": "1" } });
    const before = judge.requests.length;
    const v = await j.scoreEpisode(slots());
    expect(v).toMatchObject({ share: 0.8, tries: 2 });
    expect(judge.requests.length - before).toBe(2);
    expect(waits).toEqual([1_000]); // not the backoff's 100 ms
  });

  it("Retry-After as an HTTP date is honoured too, and a Retry-After past retryAfterMaxMs is capped", async () => {
    const { waits, sleep } = recorded();
    const j = new Judge(part({ retries: 3 }), RUBRIC, { env: {}, backoff: NO_JITTER, sleep });
    judge.script.push(
      { status: 429, headers: { "retry-after": new Date(Date.now() + 3_000).toUTCString() } },
      { status: 503, headers: { "retry-after": "3600" } },
    );
    expect(await j.scoreEpisode(slots())).toMatchObject({ tries: 3 });
    // The date has whole seconds: 3 s ahead, less what was cut and what passed.
    expect(waits[0]).toBeGreaterThan(1_500);
    expect(waits[0]).toBeLessThanOrEqual(3_000);
    expect(waits[1]).toBe(NO_JITTER.retryAfterMaxMs);
  });

  it("a 503 twice, then 200: the gaps between tries grow (real waits, small settings)", async () => {
    const waits: number[] = [];
    const j = new Judge(part(), RUBRIC, {
      env: {},
      backoff: NO_JITTER,
      sleep: (ms, signal) => {
        waits.push(ms);
        return sleep(ms, signal);
      },
    });
    judge.script.push({ status: 503 }, { status: 503 });
    const before = judge.requests.length;
    const v = await j.scoreEpisode(slots());
    expect(v.tries).toBe(3);
    expect(waits).toEqual([100, 200]);
    const at = judge.requests.slice(before).map((r) => r.at);
    const gaps = [at[1]! - at[0]!, at[2]! - at[1]!];
    // The judge was left alone at least as long as each wait (a timer may fire a millisecond early).
    expect(gaps[0]).toBeGreaterThanOrEqual(99);
    expect(gaps[1]).toBeGreaterThanOrEqual(199);
    expect(gaps[1]).toBeGreaterThan(gaps[0]!);
  });

  it.each([400, 401, 403, 404])("HTTP %i is not retried: it fails at once, naming the status and what to check", async (status) => {
    const { waits, sleep } = recorded();
    const j = new Judge(part(), RUBRIC, { env: {}, backoff: NO_JITTER, sleep });
    judge.script.push({ status });
    const before = judge.requests.length;
    const err = await j.scoreEpisode(slots()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_JUDGE_FAILED" });
    expect(judge.requests.length - before).toBe(1);
    expect(waits).toEqual([]);
    const message = (err as Error).message;
    expect(message).toContain(`judge 'judge' (judge-7b) refused the request: HTTP ${status} from ${judge.baseUrl}/chat/completions`);
    expect(message).toContain("not retried");
    if (status === 401) expect(message).toContain("no key was sent: $AGENTJET_JUDGE_API_KEY is unset");
    if (status === 404) expect(message).toContain(`check the endpoint ${judge.baseUrl}`);
  });

  it("a 401 with a key sent says to check the key", async () => {
    const j = new Judge(part(), RUBRIC, { env: { AGENTJET_JUDGE_API_KEY: "sk-wrong" }, backoff: NO_JITTER, sleep: recorded().sleep });
    judge.script.push({ status: 401 });
    await expect(j.scoreEpisode(slots())).rejects.toThrow("not retried, check the key in $AGENTJET_JUDGE_API_KEY");
  });

  it("the error lists each try's problem and the wait after it", async () => {
    const j = new Judge(part({ retries: 1 }), RUBRIC, { env: {}, backoff: NO_JITTER, sleep: recorded().sleep });
    judge.script.push({ status: 429, headers: { "retry-after": "2" } }, { status: 502 });
    await expect(j.scoreEpisode(slots())).rejects.toThrow(
      `gave no verdict in 2 tries: HTTP 429 from ${judge.baseUrl}/chat/completions: {"error":{"message":"status 429"}} (waited 2.0 s, Retry-After 2.0 s); HTTP 502 from`,
    );
  });

  it("an abort of the episode's signal cuts a wait short", async () => {
    const j = new Judge(part(), RUBRIC, { env: {} });
    judge.script.push({ status: 503, headers: { "retry-after": "30" } });
    const controller = new AbortController();
    const before = judge.requests.length;
    const started = performance.now();
    const scoring = j.scoreEpisode(slots(), { signal: controller.signal });
    while (judge.requests.length === before) await sleep(5);
    controller.abort();
    await expect(scoring).rejects.toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(judge.requests.length - before).toBe(1);
  });
});

describe("judge retries: the backoff", () => {
  it("doubles from baseMs up to maxMs, each wait a random point in (step * (1 - jitter), step]", () => {
    const at = (r: number) => [1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, JUDGE_BACKOFF, undefined, () => r));
    expect(at(0)).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(at(0.999_999)).toEqual([500, 1_000, 2_000, 4_000, 4_000, 4_000]);
    // With jitter 0.5 the ranges meet but do not overlap: whatever the draws, no wait is shorter than the one before.
    for (let i = 0; i < 200; i++) {
      const waits = [1, 2, 3, 4, 5].map((n) => retryDelayMs(n, JUDGE_BACKOFF));
      for (let n = 1; n < 4; n++) expect(waits[n]).toBeGreaterThanOrEqual(waits[n - 1]!);
    }
  });

  it("Retry-After is a floor, capped at retryAfterMaxMs", () => {
    expect(retryDelayMs(1, JUDGE_BACKOFF, 3_000, () => 0)).toBe(3_000);
    expect(retryDelayMs(3, JUDGE_BACKOFF, 100, () => 0)).toBe(4_000);
    expect(retryDelayMs(1, JUDGE_BACKOFF, 3_600_000, () => 0)).toBe(60_000);
  });

  it("reads Retry-After as seconds or an HTTP date; anything else is ignored", () => {
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now)).toBe(0); // in the past: no wait of its own
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-1", now)).toBeUndefined();
  });

  it("retries 408, 429 and 5xx; never 400, 401, 403, 404", () => {
    expect([408, 429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 409, 422].some(isRetryableStatus)).toBe(false);
  });
});
