import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from "testcontainers";
import { afterAll, expect, it } from "vitest";
import { ensureNodeBaseImage } from "../../plugins/docker/node-base-image.ts";
import { describeDocker } from "../helpers/docker.ts";

const ROOT = join(import.meta.dirname, "..", "..");
/** testcontainers drives `docker compose` (v2); Debian's docker-compose package is the v1 standalone CLI. */
const composeV2 = spawnSync("docker", ["compose", "version"]).status === 0;
const composeV1 = !composeV2 && spawnSync("docker-compose", ["version"]).status === 0;

/**
 * deploy/compose.yaml (server + two clients) with the GPU box replaced by the vLLM and trainer doubles
 * (test/e2e/compose/compose.doubles.yaml), brought up by testcontainers from locally built images only:
 * a one-step arith run trains through the openai-tokens engine and ends "done".
 */
describeDocker("deploy/compose.yaml: server + two clients in containers against the GPU-box doubles", () => {
  let env: StartedDockerComposeEnvironment | undefined;
  afterAll(async () => {
    await env?.down({ timeout: 1_000 });
  });

  it("runs a short run to its end", { timeout: 300_000 }, async () => {
    // Without either CLI testcontainers fails with a bare `spawn docker-compose ENOENT`.
    if (!composeV2 && !composeV1) throw new Error("neither `docker compose` (v2) nor `docker-compose` (v1) is installed: apt-get install docker-compose (.ci/run does)");
    const image = await ensureNodeBaseImage();
    const admin = randomBytes(24).toString("hex");
    const client = randomBytes(24).toString("hex");
    const project = `aj-compose-${randomBytes(4).toString("hex")}`;
    let compose = new DockerComposeEnvironment(join(ROOT, "deploy"), ["compose.yaml", "../test/e2e/compose/compose.doubles.yaml"])
      .withProjectName(project)
      .withEnvironment({
        AGENTJET_IMAGE: image,
        AGENTJET_REPO: ROOT,
        AGENTJET_ADMIN_TOKEN: admin,
        AGENTJET_CLIENT_TOKEN: client,
        AGENTJET_CONFIG: "/app/test/e2e/compose/run.yaml",
        AGENTJET_PUBLISH: "8700",
      })
      // The image has no shell for testcontainers' in-container port probe: wait for a first log line.
      .withDefaultWaitStrategy(Wait.forLogMessage(/./))
      .withStartupTimeout(180_000);
    if (!composeV2) compose = compose.withClientOptions({ executable: { standalone: true } });
    env = await compose.up();
    const started = env;
    /** Compose v2 names containers <service>-1, v1 <project>_<service>_1. */
    const container = (service: string) => {
      try {
        return started.getContainer(`${service}-1`);
      } catch {
        return started.getContainer(`${project}_${service}_1`);
      }
    };
    const server = container("server");
    const url = `http://${server.getHost()}:${server.getMappedPort(8700)}`;
    let status: { state: string; lastRun: { reason: string; step: number } | null; clients: string[] } | undefined;
    for (;;) {
      const res = await fetch(`${url}/v1/engine/status`, { headers: { authorization: `Bearer ${client}` } });
      status = (await res.json()) as typeof status;
      if (status!.lastRun) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(status!.lastRun, JSON.stringify(status)).toMatchObject({ reason: "done", step: 1 });
    expect([...status!.clients].sort()).toEqual(["client-1", "client-2"]);
  });
});
