import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerClient } from "../../plugins/docker/docker-client.ts";
import { buildDockerImage, type ContainerRuntime, type EnvironmentRuntime, ensureNodeBaseImage, openEnvironment } from "../../plugins/index.ts";
import { defineFaultCases, openOk, playClean, waitFor } from "./fault-suite.ts";
import { loadFixture } from "./fixture-manifest.ts";

const IMAGE = "agentjet-test/docker-faulty:latest";
const fixture = loadFixture("docker-faulty");

/** One image for the whole file: the base is built once per Node version, the plugin layer is cached. */
let built: Promise<void> | undefined;
function ensureImage(): Promise<void> {
  built ??= buildDockerImage({ ...fixture, tag: IMAGE });
  return built;
}

const task = { id: "t", split: "train", data: {} };

/**
 * The docker driver's fault, supervision and escape tests, run under one OCI runtime: runc
 * (docker-driver.test.ts) and gVisor's runsc (docker-gvisor.test.ts).
 */
export function defineDockerSuite(containerRuntime: ContainerRuntime): void {
  // Memory fills slower under gVisor's kernel: on a loaded machine the memory fault can outlast 2 s before
  // the OOM kill, so its calls get a longer limit there.
  const manifest =
    containerRuntime === "runsc" ? { ...fixture.manifest, limits: { ...fixture.manifest.limits, callTimeoutMs: 5_000 } } : fixture.manifest;
  const open = (o: { warm?: number; maxInstances?: number; healthIntervalMs?: number } = {}) =>
    openEnvironment({ ...fixture, manifest, image: IMAGE, containerRuntime, ...o });
  beforeAll(async () => {
    await ensureImage();
  }, 180_000);

  describe("fault injection", () => {
    defineFaultCases(() => open({ warm: 2, maxInstances: 4 }));
  });

  describe("supervision and escapes", () => {
    let rt: EnvironmentRuntime;
    let server: Server;
    let port: number;
    beforeAll(async () => {
      rt = await open({ warm: 1 });
      server = createServer((s) => s.end("host secret"));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      await rt?.close();
      await new Promise((r) => server?.close(r));
    });

    async function probe(session: Awaited<ReturnType<typeof openOk>>, name: string): Promise<unknown> {
      const r = await session.step({ actions: { solver: `probe:${name}` } });
      if (r.kind !== "ok") throw new Error(`probe ${name} failed: ${r.failure.kind}: ${r.failure.message}`);
      return r.value.info?.probe;
    }

    async function withEpisode<T>(fn: (s: Awaited<ReturnType<typeof openOk>>) => Promise<T>): Promise<T> {
      const s = await openOk(rt);
      expect((await s.reset({ task, seed: 1, builtinAgents: [] })).kind).toBe("ok");
      try {
        return await fn(s);
      } finally {
        await s.close();
      }
    }

    it("a container killed mid-episode fails that episode as crash; the next succeeds", async () => {
      const s = await openOk(rt);
      await s.reset({ task, seed: 1, builtinAgents: [] });
      const id = (await probe(s, "instance")) as string;
      await dockerClient().getContainer(id).kill();
      expect(await s.step({ actions: { solver: "hi" } })).toMatchObject({ kind: "failed", failure: { kind: "crash" } });
      await s.close();
      expect(await playClean(rt)).toBe(1);
    });

    it("health checks replace an idle container that died", async () => {
      const watched = await open({ warm: 1, maxInstances: 1, healthIntervalMs: 100 });
      const s = await openOk(watched);
      await s.reset({ task, seed: 1, builtinAgents: [] });
      const id = (await probe(s, "instance")) as string;
      await s.close();
      expect(watched.stats().idle).toBe(1);
      await dockerClient().getContainer(id).kill();
      await waitFor(() => watched.stats().replaced === 1 && watched.stats().idle === 1, 30_000);
      expect(watched.stats().failures.crash).toBe(1);
      expect(await playClean(watched)).toBe(1);
      await watched.close();
    });

    // Regression: AppWorld's instances each run a server on 127.0.0.1:8000; in one shared namespace the
    // second failed with EADDRINUSE. Sharing is the manifest's choice (docker.sharedLoopback), off by default.
    it.runIf(containerRuntime === "runc")("gives each instance its own network namespace unless the manifest shares one", async () => {
      const own = await openEnvironment({ ...fixture, manifest: { ...manifest, docker: { ...manifest.docker!, sharedLoopback: false } }, image: IMAGE, containerRuntime, warm: 0 });
      try {
        const s = await openOk(own);
        expect((await s.reset({ task, seed: 1, builtinAgents: [] })).kind).toBe("ok");
        const r = await s.step({ actions: { solver: "probe:instance" } });
        if (r.kind !== "ok") throw new Error(`probe failed: ${r.failure.kind}`);
        const info = await dockerClient().getContainer(r.value.info?.probe as string).inspect();
        expect(info.HostConfig.NetworkMode).toBe("none");
        await s.close();
      } finally {
        await own.close();
      }
    });

    it("runs as a non-root user with the sandbox's host config", async () => {
      await withEpisode(async (s) => {
        expect(await probe(s, "user")).toEqual({ uid: 1000, gid: 1000 });
        const info = await dockerClient()
          .getContainer((await probe(s, "instance")) as string)
          .inspect();
        const mb = fixture.manifest.limits.memoryMb * 1024 * 1024;
        if (containerRuntime === "runsc") {
          // gVisor: each instance its own sandbox with no network at all.
          expect(info.HostConfig).toMatchObject({ NetworkMode: "none", Runtime: "runsc" });
        } else {
          // Instances join one loopback-only namespace (the fixture sets docker.sharedLoopback), held by a container with no network.
          const holderId = /^container:(.+)$/.exec(info.HostConfig.NetworkMode ?? "")?.[1];
          expect(holderId).toBeDefined();
          const holder = await dockerClient().getContainer(holderId!).inspect();
          expect(holder.HostConfig).toMatchObject({ NetworkMode: "none", ReadonlyRootfs: true, CapDrop: ["ALL"] });
        }
        expect(info.HostConfig).toMatchObject({
          ReadonlyRootfs: true,
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          Memory: mb,
          MemorySwap: mb,
          NanoCpus: 1e9,
        });
        const pids = fixture.manifest.limits.pids;
        if (containerRuntime === "runsc") {
          // gVisor's own threads need room in the cgroup; the sandbox's processes are held to RLIMIT_NPROC.
          expect(info.HostConfig).toMatchObject({ PidsLimit: 512, Ulimits: [{ Name: "nproc", Soft: pids, Hard: pids }] });
        } else {
          expect(info.HostConfig.PidsLimit).toBe(pids);
        }
      });
    });

    it("cannot write its root filesystem; /tmp is a writable tmpfs", async () => {
      await withEpisode(async (s) => {
        const fs = (await probe(s, "fs")) as Record<string, string>;
        // gVisor checks permissions before the read-only mount, so a non-root write there is EACCES.
        const refused = containerRuntime === "runsc" ? ["EROFS", "EACCES"] : ["EROFS"];
        expect(refused).toContain(fs.root);
        expect(refused).toContain(fs.etc);
        expect(fs.tmp).toBe("ok");
      });
    });

    it("has no network: only loopback, and the host's loopback is out of reach", async () => {
      await withEpisode(async (s) => {
        const net = (await probe(s, `net:${port}`)) as { interfaces: string[]; hostLoopback: string };
        expect(net.interfaces).toEqual(["lo"]);
        expect(net.hostLoopback).toBe("ECONNREFUSED");
      });
    });

    it("cannot start more processes than its pid limit", async () => {
      await withEpisode(async (s) => {
        const r = (await probe(s, "pids")) as { started: number; refused: string | null };
        expect(r.refused).toBe("EAGAIN");
        expect(r.started).toBeLessThan(fixture.manifest.limits.pids);
      });
    });

    it("generates tasks and solves in the container", async () => {
      expect(await rt.listTasks("train", { seed: 1 })).toHaveLength(3);
      expect(await rt.solve({ task, agent: "solver", messages: [] })).toEqual({ kind: "ok", value: "hi" });
    });

    it("builds the node base image once and returns its tag", async () => {
      const tag = await ensureNodeBaseImage();
      expect(tag).toBe(`agentjet/node-base:${process.version.slice(1)}`);
      expect(await ensureNodeBaseImage()).toBe(tag);
    });
  });
}
