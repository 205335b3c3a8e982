import type { FrozenModelConfig } from "../config/run-config.ts";
import { AgentJetServerError } from "../errors.ts";

export class FrozenUpstreamError extends AgentJetServerError {
  readonly status: number;
  constructor(model: string, status: number, detail: string, options?: { cause?: unknown }) {
    super("AJ_ERR_FROZEN_UPSTREAM", `frozen model '${model}' failed (${status}): ${detail}`, options);
    this.status = status;
  }
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
      try {
        res = await doFetch(url, { method: "POST", headers, body: JSON.stringify(request) });
      } catch (err) {
        throw new FrozenUpstreamError(name, 502, "unreachable", { cause: err });
      }
      const text = await res.text();
      if (!res.ok) throw new FrozenUpstreamError(name, res.status, text.slice(0, 500));
      try {
        const json = JSON.parse(text) as UpstreamCompletion;
        if (!Array.isArray(json.choices) || json.choices.length === 0) throw new Error("no choices");
        return json;
      } catch (err) {
        throw new FrozenUpstreamError(name, 502, "malformed response", { cause: err });
      }
    },
  };
}
