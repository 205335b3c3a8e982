import type { RunConfig } from "../../../server/config/run-config.ts";
import type { StrategyName } from "../../../server/training/batching-strategies.ts";
import { smallQuickstart } from "../train/helpers.ts";

/** The quickstart, cut to a few small steps, with the given batching strategy. */
export async function smallConfig(strategy: StrategyName = "tasks", steps = 1): Promise<RunConfig> {
  // No supervised warm start: these tests are about the service, not about learning.
  const config = await smallQuickstart({ steps, checkpointEvery: 100, batchTasks: 2, groupSize: 4, concurrency: 8 });
  config.batching.strategy = strategy;
  return config;
}

export async function call(url: string, method: "GET" | "POST", body?: unknown, token?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  // Control-plane POSTs always carry a JSON body (the auth contract).
  const json = method === "POST" ? (body ?? {}) : body;
  if (json !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { method, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

export async function waitFor<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 120_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
