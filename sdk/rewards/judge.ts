import { createHash } from "node:crypto";
import { RewardModelError } from "./errors.ts";
import { isRetryableStatus, JUDGE_BACKOFF, type JudgeBackoff, parseRetryAfter, retryDelayMs, sleep } from "./judge-retries.ts";
import type { JudgePart } from "./spec.ts";
import { parseRanking, parseVerdict } from "./verdict.ts";

export interface JudgeDeps {
  fetch?: typeof fetch;
  /** Environment variables (default `process.env`): the base URL and API key. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Verdicts by content hash (default: a cache per judge). */
  cache?: Map<string, JudgeVerdict>;
  /** The waits between tries (default `JUDGE_BACKOFF`: 0.5-1 s before the second try, doubling up to 4-8 s; `Retry-After` honoured up to 60 s). */
  backoff?: JudgeBackoff;
  /** How a wait is waited (default: a timer that the episode's signal cuts short). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Cuts a judging short: the episode was cancelled or the client is stopping. */
export interface JudgeOptions {
  signal?: AbortSignal;
}

export interface JudgeVerdict {
  /** Share of the reward range, [0, 1] (episode scope), or the ranking (group scope). */
  share?: number;
  ranking?: number[];
  /** The judge's text, recorded with the episode. */
  raw: string;
  /** Tries it took (1 = first). */
  tries: number;
}

/** Fills `{{name}}` slots of a rubric. Unknown slots stay as written. */
export function fillRubric(rubric: string, slots: Readonly<Record<string, string>>): string {
  return rubric.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => slots[name] ?? whole);
}

/** One ask of the judge that got no text: worth another try, after at least `retryAfterMs` when it said so. */
interface Transient {
  problem: string;
  retryAfterMs?: number;
}

/**
 * An LLM judge: a frozen model behind any OpenAI-compatible endpoint. Asks it, parses its verdict, and
 * tries again up to `part.retries` times: after a connection error, a timeout, HTTP 408, 429 or 5xx, once
 * a backoff wait has passed (judge-retries.ts); after a malformed verdict, at once (the judge answered,
 * it is not overloaded). Then, or at once on any other HTTP error (400, 401, 403, 404: another try would
 * be refused the same way), throws `RewardModelError` (the episode is an infrastructure failure, never
 * reward 0). Verdicts are cached by a hash of (model, prompt, verdict format).
 */
export class Judge {
  readonly #cache: Map<string, JudgeVerdict>;
  calls = 0;

  constructor(
    readonly part: JudgePart,
    /** The rubric text (the file's contents, when `part.rubric` names a file). */
    readonly rubric: string,
    readonly deps: JudgeDeps = {},
  ) {
    this.#cache = deps.cache ?? new Map();
  }

  /** One episode's verdict, as a share of the reward range. */
  async scoreEpisode(slots: { task: string; transcript: string; reference: string }, options: JudgeOptions = {}): Promise<JudgeVerdict> {
    const prompt = fillRubric(this.rubric, slots);
    return this.#ask(
      prompt,
      (text) => {
        const share = parseVerdict(text, this.part.verdict);
        return share === null ? null : { share };
      },
      options.signal,
    );
  }

  /** A group's ranking of its n trajectories (1-based, best first). */
  async rankGroup(slots: { task: string; reference: string; transcripts: readonly string[] }, options: JudgeOptions = {}): Promise<JudgeVerdict> {
    const n = slots.transcripts.length;
    const trajectories = slots.transcripts.map((t, i) => `### Trajectory ${i + 1}\n${t}`).join("\n\n");
    const prompt = fillRubric(this.rubric, { task: slots.task, reference: slots.reference, trajectories, n: String(n) });
    return this.#ask(
      prompt,
      (text) => {
        const ranking = parseRanking(text, n);
        return ranking ? { ranking } : null;
      },
      options.signal,
    );
  }

  async #ask(
    prompt: string,
    parse: (text: string) => Omit<JudgeVerdict, "raw" | "tries"> | null,
    signal: AbortSignal | undefined,
  ): Promise<JudgeVerdict> {
    const key = createHash("sha256").update(JSON.stringify([this.part.model, this.part.verdict, this.part.scope, prompt])).digest("hex");
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const tries = this.part.retries + 1;
    const problems: string[] = [];
    let waits = 0;
    let malformed = false;
    for (let attempt = 1; attempt <= tries; attempt++) {
      signal?.throwIfAborted();
      const answer = await this.#complete(prompt, signal);
      if (typeof answer === "string") {
        const parsed = parse(answer);
        if (parsed) {
          const verdict = { ...parsed, raw: answer, tries: attempt };
          this.#cache.set(key, verdict);
          return verdict;
        }
        problems.push(`malformed verdict: ${JSON.stringify(answer.slice(0, 200))}`);
        malformed = true;
        continue;
      }
      malformed = false;
      if (attempt === tries) {
        problems.push(answer.problem);
        break;
      }
      const ms = retryDelayMs(++waits, this.deps.backoff ?? JUDGE_BACKOFF, answer.retryAfterMs);
      problems.push(`${answer.problem} (waited ${(ms / 1000).toFixed(1)} s${answer.retryAfterMs === undefined ? "" : `, Retry-After ${(answer.retryAfterMs / 1000).toFixed(1)} s`})`);
      await (this.deps.sleep ?? sleep)(ms, signal);
    }
    const code = malformed ? "AJ_ERR_JUDGE_VERDICT" : "AJ_ERR_JUDGE_FAILED";
    throw new RewardModelError(code, `judge '${this.part.name}' (${this.part.model}) gave no verdict in ${tries} tries: ${problems.join("; ")}`);
  }

  /** The judge's text, or why this try got none when another may; throws when no try can succeed. */
  async #complete(prompt: string, signal: AbortSignal | undefined): Promise<string | Transient> {
    const env = this.deps.env ?? process.env;
    const base = (this.part.baseUrl ?? env.AGENTJET_JUDGE_BASE_URL ?? "").replace(/\/+$/, "");
    if (!base) throw new RewardModelError("AJ_ERR_JUDGE_FAILED", `judge '${this.part.name}' has no endpoint: set baseUrl in the manifest or $AGENTJET_JUDGE_BASE_URL`);
    const apiKey = env[this.part.apiKeyEnv];
    this.calls += 1;
    const url = `${base}/chat/completions`;
    const timeout = AbortSignal.timeout(this.part.timeoutMs);
    try {
      const res = await (this.deps.fetch ?? fetch)(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({ model: this.part.model, messages: [{ role: "user", content: prompt }], temperature: this.part.temperature }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (!res.ok) {
        const problem = `HTTP ${res.status} from ${url}: ${(await res.text()).slice(0, 200)}`;
        if (!isRetryableStatus(res.status)) {
          throw new RewardModelError(
            "AJ_ERR_JUDGE_FAILED",
            `judge '${this.part.name}' (${this.part.model}) refused the request: ${problem}; not retried, ${this.#refusalHint(res.status, base, apiKey !== undefined && apiKey !== "")}`,
          );
        }
        const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
        return retryAfterMs === undefined ? { problem } : { problem, retryAfterMs };
      }
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
      const content = body.choices?.[0]?.message?.content;
      return typeof content === "string" ? content : { problem: "the judge's reply has no choices[0].message.content" };
    } catch (err) {
      if (err instanceof RewardModelError) throw err;
      signal?.throwIfAborted();
      // fetch says only "fetch failed" (the reason is its cause) or "The operation was aborted due to timeout".
      if (timeout.aborted) return { problem: `no answer from ${url} within timeoutMs ${this.part.timeoutMs}` };
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
      return { problem: `${url}: ${err instanceof Error ? err.message : String(err)}${cause}` };
    }
  }

  /** What to check when the judge refuses: another try would be refused the same way. */
  #refusalHint(status: number, base: string, keySent: boolean): string {
    if (status === 401 || status === 403) {
      return keySent ? `check the key in $${this.part.apiKeyEnv}` : `no key was sent: $${this.part.apiKeyEnv} is unset`;
    }
    if (status === 404) return `check the endpoint ${base} (an OpenAI-compatible …/v1) and the model name '${this.part.model}'`;
    return "the judge rejects the request itself";
  }
}
