import type { FrozenModelConfig } from "../config/run-config.ts";
import { AgentJetServerError } from "../errors.ts";

/** How an upstream call failed: it answered an HTTP error, answered nothing usable, could not be reached, or did not answer in time. */
export type UpstreamFailure = "status" | "malformed" | "unreachable" | "timeout";

export class FrozenUpstreamError extends AgentJetServerError {
  readonly status: number;
  readonly failure: UpstreamFailure;
  /** What went wrong, for logs (an upstream's body, cut) and, unreachable or timed out, for the client. */
  readonly detail: string;
  constructor(model: string, status: number, detail: string, options?: { cause?: unknown; failure?: UpstreamFailure }) {
    super("AJ_ERR_FROZEN_UPSTREAM", `frozen model '${model}' failed (${status}): ${detail}`, options);
    this.status = status;
    this.failure = options?.failure ?? "status";
    this.detail = detail;
  }
}

/** What a failed fetch says about why (`ECONNREFUSED`, `ENOTFOUND`, ...), for the message. */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  return err instanceof Error ? err.message : String(err);
}

/** The parts of an upstream chat completion the server reads (it passes the rest through). */
export interface UpstreamCompletion {
  choices: Array<{
    message: { content?: string | null; tool_calls?: unknown[] };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
  [key: string]: unknown;
}

/** A frozen model: an OpenAI-compatible endpoint that plays an agent. Recorded for logs, never trained. */
export interface FrozenModel {
  readonly name: string;
  readonly model: string;
  /** Sends a non-streaming chat completion request (`model` and `temperature` are overridden). */
  complete(body: Record<string, unknown>): Promise<UpstreamCompletion>;
}

export interface FrozenModelDeps {
  /** Injected for tests. Default: global fetch. */
  fetch?: typeof fetch;
  /** Default: `$OPENAI_API_KEY`. */
  env?: Record<string, string | undefined>;
}

export function createFrozenModel(name: string, config: FrozenModelConfig, deps: FrozenModelDeps = {}): FrozenModel {
  const doFetch = deps.fetch ?? fetch;
  const apiKey = config.apiKey ?? (deps.env ?? process.env).OPENAI_API_KEY;
  const url = `${config.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  return {
    name,
    model: config.model,
    async complete(body) {
      const request: Record<string, unknown> = { ...body, model: config.model, stream: false };
      delete request.stream_options;
      if (config.temperature !== undefined) request.temperature = config.temperature;
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      let res: Response;
      let text: string;
      const signal = AbortSignal.timeout(config.timeoutMs);
      try {
        res = await doFetch(url, { method: "POST", headers, body: JSON.stringify(request), signal });
        text = await res.text();
      } catch (err) {
        if (signal.aborted) throw new FrozenUpstreamError(name, 504, `no answer in ${config.timeoutMs} ms`, { cause: err, failure: "timeout" });
        throw new FrozenUpstreamError(name, 502, networkReason(err), { cause: err, failure: "unreachable" });
      }
      if (!res.ok) throw new FrozenUpstreamError(name, res.status, text.slice(0, 500));
      try {
        const json = JSON.parse(text) as UpstreamCompletion;
        if (!Array.isArray(json.choices) || json.choices.length === 0) throw new Error("no choices");
        return json;
      } catch (err) {
        throw new FrozenUpstreamError(name, 502, "malformed response", { cause: err, failure: "malformed" });
      }
    },
  };
}
