import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A TEST DOUBLE of a frozen judge model behind an OpenAI-compatible `/v1/chat/completions` (a real judge
 * model cannot run here). It answers the way judge models do: some reasoning, then a verdict line. By
 * default it grades by `grade(prompt)`; `script` queues one-off behaviours for the next requests:
 * `malformed` (prose with no verdict), `hang` (never answers), `http-500`, or any HTTP error with its
 * headers (`{ status: 429, headers: { "retry-after": "1" } }`, rate limited).
 */
export interface JudgeDouble {
  baseUrl: string;
  /** `at`: when the request arrived (performance.now(), ms). */
  requests: Array<{ model: string; prompt: string; authorization: string | undefined; at: number }>;
  script: JudgeBehaviour[];
  close(): Promise<void>;
}

export type JudgeBehaviour = "malformed" | "hang" | "http-500" | { status: number; headers?: Record<string, string> };

export async function startJudgeDouble(grade: (prompt: string) => string | { fail: JudgeBehaviour }): Promise<JudgeDouble> {
  const requests: JudgeDouble["requests"] = [];
  const script: JudgeDouble["script"] = [];
  const hanging = new Set<import("node:http").ServerResponse>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.url !== "/v1/chat/completions" || req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body) as { model: string; messages: Array<{ content: string }> };
      const prompt = parsed.messages.map((m) => m.content).join("\n");
      requests.push({ model: parsed.model, prompt, authorization: req.headers.authorization, at: performance.now() });
      const graded = grade(prompt);
      const next = script.shift() ?? (typeof graded === "string" ? undefined : graded.fail);
      if (next === "hang") {
        hanging.add(res);
        return;
      }
      if (next === "http-500" || typeof next === "object") {
        const { status, headers } = next === "http-500" ? { status: 500, headers: {} } : next;
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify({ error: { message: `status ${status}` } }));
        return;
      }
      const content = next === "malformed" || typeof graded !== "string" ? "I have read the transcript carefully and I think it is quite reasonable overall." : graded;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: 0,
          model: parsed.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
