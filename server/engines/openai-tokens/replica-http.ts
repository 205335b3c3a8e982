import { ReplicaRequestError, ReplicaUnavailableError } from "./errors.ts";

export interface ReplicaHttp {
  /** POSTs JSON and returns the body text of a 2xx answer; throws the coded replica errors otherwise. */
  post(baseUrl: string, path: string, body: unknown): Promise<string>;
}

/** Pulls the message out of vLLM's (`{error:{message}}` or `{message}`) or SGLang's error bodies. */
function readErrorMessage(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    if (typeof j.error === "object" && typeof j.error.message === "string") return j.error.message;
    if (typeof j.error === "string") return j.error;
    if (typeof j.message === "string") return j.message;
    if (typeof j.detail === "string") return j.detail;
  } catch {
    // not JSON: the text is the message
  }
  return text.slice(0, 500);
}

export function createReplicaHttp(opts: { fetch: typeof fetch; apiKey?: string; timeoutMs: number }): ReplicaHttp {
  return {
    async post(baseUrl, path, body) {
      const url = `${baseUrl.replace(/\/+$/, "")}${path}`;
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
      let res: Response;
      let text: string;
      try {
        res = await opts.fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(opts.timeoutMs) });
        text = await res.text();
      } catch (cause) {
        throw new ReplicaUnavailableError(url, (cause as Error).message, { cause });
      }
      if (res.ok) return text;
      if (res.status >= 500 || res.status === 429 || res.status === 408) {
        throw new ReplicaUnavailableError(url, `${res.status} ${readErrorMessage(text)}`);
      }
      throw new ReplicaRequestError(url, res.status, readErrorMessage(text));
    },
  };
}
