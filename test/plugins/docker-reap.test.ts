import { spawn } from "node:child_process";
import { once } from "node:events";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dockerClient } from "../../plugins/docker/docker-client.ts";
import { ownerLabels, reapOrphanContainers, resetReaped } from "../../plugins/docker/reap-containers.ts";
import { buildDockerImage } from "../../plugins/index.ts";
import { describeDocker } from "../helpers/docker.ts";
import { loadFixture } from "./fixture-manifest.ts";

const IMAGE = "agentjet-test/docker-faulty:latest";
const REPO = resolve(import.meta.dirname, "../..");

async function containersOf(pid: number) {
  return dockerClient().listContainers({ all: true, filters: { label: [`agentjet.owner.pid=${pid}`] } });
}

describeDocker("containers of an agentjet process killed with SIGKILL", () => {
  let child: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    await buildDockerImage({ ...loadFixture("docker-faulty"), tag: IMAGE });
  }, 180_000);

  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it("its running instances exit on their own, and the next process removes them all (spare included)", { timeout: 90_000 }, async () => {
    child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", join(REPO, "test/plugins/fixtures/hold-docker-instance.ts"), IMAGE], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const pid = child.pid!;
    let out = "";
    child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
    while (!out.includes("ready")) {
      if (child.exitCode !== null) throw new Error(`the child exited with ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = await containersOf(pid);
    expect(before.filter((c) => c.State === "running").length).toBeGreaterThanOrEqual(1);
    expect(before[0]!.Labels).toMatchObject({ ...ownerLabels(), "agentjet.owner.pid": String(pid) });

    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
    // Its stdin closed with the killed process's attach stream: the entry ended. (The loopback holder of
    // `sharedLoopback` has no stdin: it runs until reaped.)
    const runningInstances = async () => (await containersOf(pid)).filter((c) => c.State === "running" && c.Labels["agentjet.role"] !== "netns");
    const deadline = Date.now() + 15_000;
    while ((await runningInstances()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await runningInstances()).toEqual([]);

    resetReaped();
    const reaped = await reapOrphanContainers();
    expect(reaped.length).toBe(before.length);
    expect(await containersOf(pid)).toEqual([]);
  });

  it("leaves the containers of a process that still runs", { timeout: 30_000 }, async () => {
    const docker = dockerClient();
    const labels = { ...ownerLabels(), "agentjet.owner.pid": "1" };
    const made = await docker.createContainer({ Image: IMAGE, Labels: labels, HostConfig: { NetworkMode: "none" } });
    try {
      resetReaped();
      await reapOrphanContainers();
      expect((await made.inspect()).Id).toBe(made.id);
    } finally {
      await made.remove({ force: true });
    }
  });
});
