import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { type BuildServerOptions, buildServer } from "../../../server/app/build-server.ts";
import { type RunConfig, RunConfigSchema } from "../../../server/config/run-config.ts";
import type { Engine } from "../../../server/engines/engine.ts";
import { scriptedEngine } from "./scripted-engine.ts";

/** A minimal valid run config: one embedded-tokenizer policy `main`, optional overrides. */
export function testConfig(overrides: Record<string, unknown> = {}): RunConfig {
  return RunConfigSchema.parse({
    policies: { main: { tokenizer: "embedded" } },
    environments: [{ name: "smoke", roles: { solver: "main" } }],
    sampling: { maxTokens: 256 },
    ...overrides,
  });
}

/** The control-plane tokens of `buildTestServer`. */
export const TEST_TOKENS = { adminToken: "test-admin-token-0123456789", clientTokens: ["test-client-token-0123456789"] } as const;
export const ADMIN_AUTH = { authorization: `Bearer ${TEST_TOKENS.adminToken}` } as const;
export const CLIENT_AUTH = { authorization: `Bearer ${TEST_TOKENS.clientTokens[0]}` } as const;

/** A server on an in-memory database with the given engines (no socket; use `inject` or `listen`). */
export async function buildTestServer(
  engines: Record<string, Engine>,
  opts: Partial<BuildServerOptions> = {},
): Promise<FastifyInstance> {
  return buildServer({ config: testConfig(), dbPath: ":memory:", keySecret: "test-secret", reclaimTimer: false, engines, auth: TEST_TOKENS, ...opts });
}

export interface ScriptedServer {
  app: FastifyInstance;
  /** The run directory: its `run.db` holds what the server recorded. */
  runDir: string;
  /** The OpenAI base URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Closes the server and removes the run directory. */
  close(): Promise<void>;
}

/** A server answering with `replies` (`scriptedEngine`), recording to a temporary run directory, on a loopback socket. */
export async function listenScripted(replies: readonly string[]): Promise<ScriptedServer> {
  const runDir = mkdtempSync(join(tmpdir(), "aj-scripted-"));
  const app = await buildServer({ config: testConfig(), runDir, keySecret: "scripted", reclaimTimer: false, engines: { main: scriptedEngine(replies) } });
  const baseUrl = `${await app.listen({ host: "127.0.0.1", port: 0 })}/v1`;
  const close = async () => {
    await app.close();
    rmSync(runDir, { recursive: true, force: true });
  };
  return { app, runDir, baseUrl, close };
}

/** Registers episode `episodeId` of env `smoke` (agent `solver` on policy `main`), claims it and gives the solver's episode key. */
export function claimSolver(app: FastifyInstance, episodeId = "e1", taskId = "t1"): string {
  const store = app.agentjet.store;
  store.register({ episodeId, taskId, env: "smoke", agents: { solver: { kind: "policy", target: "main" } } });
  const claim = store.claim({ episodeId });
  if (claim.kind !== "claimed") throw new Error("no claim");
  return claim.keys.solver!;
}

/** POST /v1/chat/completions with an episode key; `body` joins `model: "main"`. */
export function postChat(app: FastifyInstance, key: string, body: Record<string, unknown>) {
  return app.inject({ method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${key}` }, payload: { model: "main", ...body } });
}
