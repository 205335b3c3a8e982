import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isLoopbackHost } from "../../../server/app/auth.ts";
import { describeTokens, resolveAuthTokens } from "../../../server/app/auth-tokens.ts";
import { removeTempDirs, tempDir } from "../../helpers/temp-dirs.ts";

afterEach(removeTempDirs);
const runDir = (): string => tempDir("tokens");

const A = "admin-token-0123456789";
const C = "client-token-0123456789";

describe("control-plane tokens", () => {
  it("generates both into <runDir>/tokens.json with mode 0600 when none is set, and reads them back next time", () => {
    const dir = runDir();
    const first = resolveAuthTokens({ auth: {}, runDir: dir, host: "127.0.0.1", env: {} });
    expect(first).toMatchObject({ generated: true, sources: { admin: "generated", client: "generated" }, file: join(dir, "tokens.json") });
    expect(first.adminToken).toMatch(/^aj-admin-[A-Za-z0-9_-]{43}$/);
    expect(first.clientTokens).toEqual([expect.stringMatching(/^aj-client-/)]);
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(first.file, "utf8"))).toEqual({ adminToken: first.adminToken, clientTokens: first.clientTokens });
    expect(describeTokens(first)).toBe(`control-plane tokens (admin and client) generated into ${first.file} (mode 0600)`);
    expect(describeTokens(first)).not.toContain(first.adminToken);
    const second = resolveAuthTokens({ auth: {}, runDir: dir, host: "0.0.0.0", env: {} });
    expect(second).toMatchObject({ generated: false, adminToken: first.adminToken, clientTokens: first.clientTokens, sources: { admin: "file", client: "file" } });
  });

  it("the config wins over the environment, the environment over tokens.json", () => {
    const dir = runDir();
    writeFileSync(join(dir, "tokens.json"), JSON.stringify({ adminToken: "file-admin-0123456789", clientTokens: ["file-client-0123456789"] }));
    const env = { AGENTJET_ADMIN_TOKEN: "env-admin-0123456789", AGENTJET_CLIENT_TOKEN: "env-client-0123456789" };
    expect(resolveAuthTokens({ auth: { adminToken: A, clientTokens: [C] }, runDir: dir, host: "0.0.0.0", env })).toMatchObject({ adminToken: A, clientTokens: [C], sources: { admin: "config", client: "config" } });
    expect(resolveAuthTokens({ auth: {}, runDir: dir, host: "0.0.0.0", env })).toMatchObject({ adminToken: env.AGENTJET_ADMIN_TOKEN, clientTokens: [env.AGENTJET_CLIENT_TOKEN], sources: { admin: "env", client: "env" } });
    expect(resolveAuthTokens({ auth: {}, runDir: dir, host: "0.0.0.0", env: {} }).sources).toEqual({ admin: "file", client: "file" });
  });

  it("an admin token alone is enough (it works as a client token); a client token alone gets a generated admin token beside it", () => {
    expect(resolveAuthTokens({ auth: { adminToken: A }, runDir: runDir(), host: "127.0.0.1", env: {} })).toMatchObject({ clientTokens: [], generated: false });
    const dir = runDir();
    const t = resolveAuthTokens({ auth: {}, runDir: dir, host: "127.0.0.1", env: { AGENTJET_CLIENT_TOKEN: C } });
    expect(t).toMatchObject({ clientTokens: [C], generated: true, sources: { admin: "generated", client: "env" } });
    expect(JSON.parse(readFileSync(t.file, "utf8"))).toEqual({ adminToken: t.adminToken });
  });

  it("refuses to generate tokens for a bind beyond loopback, and writes nothing", () => {
    const dir = runDir();
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "gpu-box"]) {
      expect(() => resolveAuthTokens({ auth: {}, runDir: dir, host, env: {} })).toThrow(expect.objectContaining({ code: "AJ_ERR_AUTH_REMOTE_WITHOUT_TOKENS" }));
    }
    expect(() => statSync(join(dir, "tokens.json"))).toThrow();
  });

  it("refuses short tokens and a broken tokens.json with coded errors", () => {
    expect(() => resolveAuthTokens({ auth: {}, runDir: runDir(), host: "127.0.0.1", env: { AGENTJET_ADMIN_TOKEN: "short" } })).toThrow(expect.objectContaining({ code: "AJ_ERR_AUTH_WEAK_TOKEN" }));
    const dir = runDir();
    writeFileSync(join(dir, "tokens.json"), "{ not json");
    expect(() => resolveAuthTokens({ auth: {}, runDir: dir, host: "127.0.0.1", env: {} })).toThrow(expect.objectContaining({ code: "AJ_ERR_AUTH_TOKENS_FILE" }));
  });

  it("knows loopback addresses", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "gpu-box", "localhost.evil.example", "127.0.0.1.nip.io"]) expect(isLoopbackHost(h), h).toBe(false);
  });
});
