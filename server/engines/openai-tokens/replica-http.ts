import { describeFetchFailure } from "../../errors.ts";
import { ReplicaProtocolError, ReplicaRequestError, ReplicaUnavailableError } from "./errors.ts";

export interface ReplicaHttp {
  /** POSTs JSON and returns the body text of a 2xx answer; throws the coded replica errors otherwise. */
  post(baseUrl: string, path: string, body: unknown): Promise<string>;
  /**
   * POSTs JSON and reads a server-sent-events answer as it comes: `onData` gets each event's data; when
   * it returns true the request is cancelled and the call resolves.
   */
  postStream(baseUrl: string, path: string, body: unknown, onData: (data: string) => boolean | void): Promise<void>;
}

/** POSTs JSON and parses the 2xx answer; an answer that is not JSON is a `ReplicaProtocolError`. */
export async function postForJson(http: ReplicaHttp, baseUrl: string, path: string, body: unknown): Promise<unknown> {
  const text = await http.post(baseUrl, path, body);
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new ReplicaProtocolError(baseUrl, "answer is not JSON", { cause });
  }
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

function failure(url: string, status: number, text: string): Error {
  if (status >= 500 || status === 429 || status === 408) return new ReplicaUnavailableError(url, `${status} ${readErrorMessage(text)}`);
  return new ReplicaRequestError(url, status, readErrorMessage(text));
}

export function createReplicaHttp(opts: { fetch: typeof fetch; apiKey?: string; timeoutMs: number }): ReplicaHttp {
  const request = (baseUrl: string, path: string, body: unknown, signal: AbortSignal) => {
    const url = `${baseUrl.replace(/\/+$/, "")}${path}`;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
    return { url, init: { method: "POST", headers, body: JSON.stringify(body), signal } };
  };
  return {
    async post(baseUrl, path, body) {
      const { url, init } = request(baseUrl, path, body, AbortSignal.timeout(opts.timeoutMs));
      let res: Response;
      let text: string;
      try {
        res = await opts.fetch(url, init);
        text = await res.text();
      } catch (cause) {
        throw new ReplicaUnavailableError(url, describeFetchFailure(cause), { cause });
      }
      if (res.ok) return text;
      throw failure(url, res.status, text);
    },
    async postStream(baseUrl, path, body, onData) {
      const cancel = new AbortController();
      const { url, init } = request(baseUrl, path, body, AbortSignal.any([cancel.signal, AbortSignal.timeout(opts.timeoutMs)]));
      let res: Response;
      try {
        res = await opts.fetch(url, init);
      } catch (cause) {
        throw new ReplicaUnavailableError(url, describeFetchFailure(cause), { cause });
      }
      if (!res.ok || !res.body) throw failure(url, res.status, await res.text().catch(() => ""));
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf("\n\n")) !== -1) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = event
              .split("\n")
              .filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5).trimStart())
              .join("\n");
            if (data.length > 0 && onData(data) === true) {
              cancel.abort();
              return;
            }
          }
        }
      } catch (cause) {
        if (cancel.signal.aborted) return;
        throw new ReplicaUnavailableError(url, `stream broke: ${(cause as Error).message}`, { cause });
      }
    },
  };
}
