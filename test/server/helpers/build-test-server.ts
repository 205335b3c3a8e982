import type { FastifyInstance } from "fastify";
import { type BuildServerOptions, buildServer } from "../../../server/app/build-server.ts";
import { type RunConfig, RunConfigSchema } from "../../../server/config/run-config.ts";
import type { Engine } from "../../../server/engines/engine.ts";

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
