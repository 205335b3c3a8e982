import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO, removeTempDirs, runCli, tempDir } from "./helpers.ts";

afterEach(removeTempDirs);
const tmp = (): string => tempDir("serve-auth");
const CONFIG = join(REPO, "examples", "quickstart.yaml");
const NO_TOKENS = { AGENTJET_ADMIN_TOKEN: "", AGENTJET_CLIENT_TOKEN: "" };

describe("agentjet serve and its tokens", () => {
  it("refuses to listen beyond loopback without tokens, with a coded error, and writes none", { timeout: 60_000 }, async () => {
    const runDir = join(tmp(), "run");
    const r = await runCli(["serve", "--config", CONFIG, "--host", "0.0.0.0", "--port", "0", "--run-dir", runDir], REPO, undefined, NO_TOKENS);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("AJ_ERR_AUTH_REMOTE_WITHOUT_TOKENS");
    expect(() => statSync(join(runDir, "tokens.json"))).toThrow();
  });

  it("on loopback it generates tokens into <run-dir>/tokens.json (0600), says where, and the control plane takes only them", { timeout: 120_000 }, async () => {
    const runDir = join(tmp(), "run");
    let checked: Promise<void> | null = null;
    const r = await runCli(["serve", "--config", CONFIG, "--port", "0", "--run-dir", runDir], REPO, (stdout, child) => {
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(stdout)?.[0];
      if (checked || !url || !stdout.includes("control-plane tokens")) return;
      checked = (async () => {
        const file = join(runDir, "tokens.json");
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(stdout).toContain(file);
        const tokens = JSON.parse(readFileSync(file, "utf8")) as { adminToken: string; clientTokens: string[] };
        expect(stdout).not.toContain(tokens.adminToken);
        // The service's own route: answered while the engine still boots (run routes say 503 until it rolls).
        expect((await fetch(`${url}/v1/engine/status`)).status).toBe(401);
        expect((await fetch(`${url}/v1/engine/status`, { headers: { authorization: `Bearer ${tokens.clientTokens[0]}` } })).status).toBe(200);
      })().finally(() => child.kill("SIGTERM"));
    });
    expect(checked).not.toBeNull();
    await checked;
    expect(r.code).toBe(130);
    // The run's resolved config can hold tokens and the key secret too.
    expect(statSync(join(runDir, "config.yaml")).mode & 0o777).toBe(0o600);
  });
});
