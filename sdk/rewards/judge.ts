import { createHash } from "node:crypto";
import { RewardModelError } from "./errors.ts";
import type { JudgePart } from "./spec.ts";
import { parseRanking, parseVerdict } from "./verdict.ts";

export interface JudgeDeps {
  fetch?: typeof fetch;
  /** Environment variables (default `process.env`): the base URL and API key. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Verdicts by content hash (default: a cache per judge). */
  cache?: Map<string, JudgeVerdict>;
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

/**
 * An LLM judge: a frozen model behind any OpenAI-compatible endpoint. Asks it, parses its verdict, and
 * retries a malformed verdict, a timeout or an HTTP error up to `part.retries` times; then throws
 * `RewardModelError` (the episode is an infrastructure failure, never reward 0). Verdicts are cached by
 * a hash of (model, prompt, verdict format).
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
  async scoreEpisode(slots: { task: string; transcript: string; reference: string }): Promise<JudgeVerdict> {
    const prompt = fillRubric(this.rubric, slots);
    return this.#ask(prompt, (text) => {
      const share = parseVerdict(text, this.part.verdict);
      return share === null ? null : { share };
    });
  }

  /** A group's ranking of its n trajectories (1-based, best first). */
  async rankGroup(slots: { task: string; reference: string; transcripts: readonly string[] }): Promise<JudgeVerdict> {
    const n = slots.transcripts.length;
    const trajectories = slots.transcripts.map((t, i) => `### Trajectory ${i + 1}\n${t}`).join("\n\n");
    const prompt = fillRubric(this.rubric, { task: slots.task, reference: slots.reference, trajectories, n: String(n) });
    return this.#ask(prompt, (text) => {
      const ranking = parseRanking(text, n);
      return ranking ? { ranking } : null;
    });
  }

  async #ask(prompt: string, parse: (text: string) => Omit<JudgeVerdict, "raw" | "tries"> | null): Promise<JudgeVerdict> {
    const key = createHash("sha256").update(JSON.stringify([this.part.model, this.part.verdict, this.part.scope, prompt])).digest("hex");
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const problems: string[] = [];
    for (let attempt = 1; attempt <= this.part.retries + 1; attempt++) {
      let text: string;
      try {
        text = await this.#complete(prompt);
      } catch (err) {
        problems.push(err instanceof Error ? err.message : String(err));
        continue;
      }
      const parsed = parse(text);
      if (parsed) {
        const verdict = { ...parsed, raw: text, tries: attempt };
        this.#cache.set(key, verdict);
        return verdict;
      }
      problems.push(`malformed verdict: ${JSON.stringify(text.slice(0, 200))}`);
    }
    const last = problems.at(-1) ?? "";
    const code = last.startsWith("malformed verdict") ? "AJ_ERR_JUDGE_VERDICT" : "AJ_ERR_JUDGE_FAILED";
    throw new RewardModelError(code, `judge '${this.part.name}' (${this.part.model}) gave no verdict in ${this.part.retries + 1} tries: ${problems.join("; ")}`);
  }

  async #complete(prompt: string): Promise<string> {
    const env = this.deps.env ?? process.env;
    const base = (this.part.baseUrl ?? env.AGENTJET_JUDGE_BASE_URL ?? "").replace(/\/+$/, "");
    if (!base) throw new RewardModelError("AJ_ERR_JUDGE_FAILED", `judge '${this.part.name}' has no endpoint: set baseUrl in the manifest or $AGENTJET_JUDGE_BASE_URL`);
    const apiKey = env[this.part.apiKeyEnv];
    this.calls += 1;
    const url = `${base}/chat/completions`;
    let res: Response;
    try {
      res = await (this.deps.fetch ?? fetch)(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({ model: this.part.model, messages: [{ role: "user", content: prompt }], temperature: this.part.temperature }),
        signal: AbortSignal.timeout(this.part.timeoutMs),
      });
    } catch (err) {
      // fetch says only "fetch failed" (the reason is its cause) or "The operation was aborted due to timeout".
      if (err instanceof Error && err.name === "TimeoutError") throw new Error(`no answer from ${url} within timeoutMs ${this.part.timeoutMs}`);
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
      throw new Error(`${url}: ${err instanceof Error ? err.message : String(err)}${cause}`);
    }
    if (!res.ok) throw new Error(`HTTP ${res.status} from ${base}/chat/completions: ${(await res.text()).slice(0, 200)}`);
    const body = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== "string") throw new Error("the judge's reply has no choices[0].message.content");
    return content;
  }
}
