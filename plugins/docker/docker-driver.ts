import type Docker from "dockerode";
import type { Manifest } from "../../sdk/env/manifest.ts";
import type { Driver, Instance } from "../instance.ts";
import { failed } from "../outcome.ts";
import type { Outcome } from "../runtime.ts";
import { dockerClient } from "./docker-client.ts";
import { HttpChannel } from "./http-channel.ts";
import { ensureInternalNetwork, INTERNAL_NETWORK } from "./network.ts";
import { SANDBOX_USER } from "./node-base-image.ts";
import { StdioChannel } from "./stdio-channel.ts";

export interface DockerDriverOptions {
  manifest: Manifest;
  image: string;
  /** Host folders for the manifest's named mounts. */
  mounts: Record<string, string>;
}

export async function createDockerDriver(opts: DockerDriverOptions): Promise<Driver> {
  const docker = dockerClient();
  const { manifest } = opts;
  const network = manifest.docker?.network ?? "none";
  if (network === "internal" || manifest.docker?.port !== undefined) await ensureInternalNetwork();
  const containerConfig = createContainerConfig(opts);
  const instances = new Set<Instance>();
  return {
    async start() {
      const r = await startInstance(docker, containerConfig, manifest, (i) => instances.delete(i));
      if (r.kind === "ok") instances.add(r.value);
      return r;
    },
    async close() {
      await Promise.all([...instances].map((i) => i.dispose()));
    },
  };
}

function createContainerConfig(opts: DockerDriverOptions): Docker.ContainerCreateOptions {
  const { manifest } = opts;
  const limits = manifest.limits;
  const memory = limits.memoryMb * 1024 * 1024;
  const networked = manifest.docker?.network === "internal" || manifest.docker?.port !== undefined;
  const binds = (manifest.docker?.mounts ?? []).flatMap((m) => {
    const host = opts.mounts[m.name];
    return host ? [`${host}:${m.target}:${m.readOnly ? "ro" : "rw"}`] : [];
  });
  return {
    Image: opts.image,
    ...(manifest.docker?.command ? { Cmd: manifest.docker.command } : {}),
    User: SANDBOX_USER,
    Tty: false,
    OpenStdin: true,
    StdinOnce: false,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Labels: { "agentjet.env": manifest.name, "agentjet.version": manifest.version },
    HostConfig: {
      NetworkMode: networked ? INTERNAL_NETWORK : "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: limits.pids,
      Tmpfs: { "/tmp": "rw,nosuid,nodev,size=64m,mode=1777" },
      Binds: binds,
    },
  };
}

async function startInstance(
  docker: Docker,
  config: Docker.ContainerCreateOptions,
  manifest: Manifest,
  onDisposed: (instance: Instance) => void,
): Promise<Outcome<Instance>> {
  let container: Docker.Container | undefined;
  try {
    container = await docker.createContainer(config);
    const port = manifest.docker?.port;
    const channel = port === undefined ? await StdioChannel.attach(container, onDisposed) : new HttpChannel(container, port, onDisposed);
    await container.start();
    const ready = await channel.waitReady(manifest.limits.startTimeoutMs);
    if (ready.kind === "failed") {
      await channel.dispose();
      return failed("start-failed", `${ready.failure.kind}: ${ready.failure.message}`);
    }
    return { kind: "ok", value: channel };
  } catch (err) {
    if (container) await container.remove({ force: true }).catch(() => undefined);
    return failed("start-failed", err instanceof Error ? err.message : String(err));
  }
}
