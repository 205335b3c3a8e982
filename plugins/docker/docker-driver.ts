import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import type { Manifest } from "../../sdk/env/index.ts";
import type { Driver, Instance } from "../instance.ts";
import { failed } from "../outcome.ts";
import type { ContainerRuntime, Outcome } from "../runtime.ts";
import { dockerClient } from "./docker-client.ts";
import { HttpChannel } from "./http-channel.ts";
import { NetnsHolder } from "./netns-holder.ts";
import { ownerLabels, reapOrphanContainers } from "./reap-containers.ts";
import { ensureInternalNetwork, INTERNAL_NETWORK } from "./network.ts";
import { SANDBOX_USER } from "./node-base-image.ts";
import { StdioChannel } from "./stdio-channel.ts";

export interface DockerDriverOptions {
  manifest: Manifest;
  image: string;
  /** Host folders for the manifest's named mounts. */
  mounts: Record<string, string>;
  /** The OCI runtime (default "runc"); "runsc" must be registered with the engine (`docker info` lists it). */
  runtime?: ContainerRuntime;
  /**
   * With `docker.network` "none" under runc, instances join one loopback-only network namespace held
   * by a holder container instead of each making its own: half of a cold start here. Default: the
   * manifest's `docker.sharedLoopback` (false: a plugin that listens inside, like AppWorld's server on
   * 127.0.0.1:8000, cannot run two instances in one namespace).
   */
  shareNetns?: boolean;
  /** Keep one container created and attached ahead of the next start (default true). */
  spare?: boolean;
  /** Called after every successful start with where its time went (the bench prints it). */
  onStartPhases?: (phases: StartPhases) => void;
}

/** Milliseconds per phase of one start; `create` and `attach` are 0 when a spare made them ahead. */
export interface StartPhases {
  create: number;
  attach: number;
  start: number;
  firstPing: number;
  spare: boolean;
}

/** Host threads gVisor's sentry and gofer may use (64 and 128 are too few for them to start). */
const RUNSC_HOST_PIDS = 512;

interface Prepared {
  container: Docker.Container;
  channel: StdioChannel | HttpChannel;
  create: number;
  attach: number;
}

export async function createDockerDriver(opts: DockerDriverOptions): Promise<Driver> {
  const docker = dockerClient();
  const { manifest } = opts;
  const networked = manifest.docker?.network === "internal" || manifest.docker?.port !== undefined;
  if (networked) await ensureInternalNetwork();
  // Containers a killed agentjet process left behind (it could not remove them) go before this one adds its own.
  await reapOrphanContainers();
  const labels = { "agentjet.env": manifest.name, "agentjet.version": manifest.version, ...ownerLabels() };
  const holder = !networked && (opts.runtime ?? "runc") === "runc" && (opts.shareNetns ?? manifest.docker?.sharedLoopback ?? false) ? new NetnsHolder(labels) : undefined;
  const networkMode = async () => (networked ? INTERNAL_NETWORK : ((await holder?.networkMode()) ?? "none"));
  const instances = new Set<Instance>();
  const onDisposed = (i: Instance) => instances.delete(i);
  let closed = false;
  let spare: Promise<Outcome<Prepared>> | undefined;

  async function prepare(): Promise<Outcome<Prepared>> {
    let container: Docker.Container | undefined;
    try {
      const t0 = performance.now();
      const name = `agentjet-${manifest.name}-${randomBytes(6).toString("hex")}`;
      container = await docker.createContainer({ ...createContainerConfig(opts, labels, await networkMode(), name), name });
      const t1 = performance.now();
      const port = manifest.docker?.port;
      const channel = port === undefined ? await StdioChannel.attach(container, onDisposed) : new HttpChannel(container, port, onDisposed);
      return { kind: "ok", value: { container, channel, create: t1 - t0, attach: performance.now() - t1 } };
    } catch (err) {
      if (container) await container.remove({ force: true }).catch(() => undefined);
      return failed("start-failed", err instanceof Error ? err.message : String(err));
    }
  }

  async function launch(p: Prepared, fromSpare: boolean): Promise<Outcome<Instance>> {
    try {
      const t0 = performance.now();
      await p.container.start();
      const t1 = performance.now();
      const ready = await p.channel.waitReady(manifest.limits.startTimeoutMs);
      if (ready.kind === "failed") {
        await p.channel.dispose();
        return failed("start-failed", `${ready.failure.kind}: ${ready.failure.message}`);
      }
      opts.onStartPhases?.({
        create: fromSpare ? 0 : p.create,
        attach: fromSpare ? 0 : p.attach,
        start: t1 - t0,
        firstPing: performance.now() - t1,
        spare: fromSpare,
      });
      return { kind: "ok", value: p.channel };
    } catch (err) {
      await p.channel.dispose();
      return failed("start-failed", err instanceof Error ? err.message : String(err));
    }
  }

  async function startOnce(): Promise<Outcome<Instance>> {
    const taken = spare;
    spare = undefined;
    const prepared = await (taken ?? prepare());
    if (prepared.kind === "failed") return prepared;
    instances.add(prepared.value.channel);
    const r = await launch(prepared.value, taken !== undefined);
    // The next spare is made after this start, so that it never competes with it.
    if (!closed && opts.spare !== false && !spare) spare = prepare();
    return r;
  }

  return {
    async start() {
      const r = await startOnce();
      if (r.kind === "ok" || !holder) return r;
      // The holder may have died (a spare made before then joined its old namespace): revive, retry once.
      await holder.revive();
      const stale = spare;
      spare = undefined;
      const s = await stale;
      if (s?.kind === "ok") await s.value.channel.dispose();
      return startOnce();
    },
    async close() {
      closed = true;
      const s = await spare;
      spare = undefined;
      if (s?.kind === "ok") await s.value.channel.dispose();
      await Promise.all([...instances].map((i) => i.dispose()));
      await holder?.remove();
    },
  };
}

function createContainerConfig(
  opts: DockerDriverOptions,
  labels: Record<string, string>,
  networkMode: string,
  name: string,
): Docker.ContainerCreateOptions {
  const { manifest } = opts;
  const limits = manifest.limits;
  const memory = limits.memoryMb * 1024 * 1024;
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
    // Stdin closes when the host's attach stream does (the host process died): the entry sees its end and exits.
    StdinOnce: true,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Labels: labels,
    // The container's own name: with a shared network namespace the hostname is the holder's.
    Env: [`AGENTJET_INSTANCE=${name}`],
    HostConfig: {
      NetworkMode: networkMode,
      ...(opts.runtime && opts.runtime !== "runc" ? { Runtime: opts.runtime } : {}),
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: Math.round(limits.cpus * 1e9),
      ...(opts.runtime === "runsc"
        ? // gVisor's own host threads count against the pids cgroup; the sandbox's processes live inside
          // its kernel, which enforces the limit as RLIMIT_NPROC (counting threads, as the cgroup does).
          { PidsLimit: Math.max(RUNSC_HOST_PIDS, limits.pids), Ulimits: [{ Name: "nproc", Soft: limits.pids, Hard: limits.pids }] }
        : { PidsLimit: limits.pids }),
      Tmpfs: { "/tmp": "rw,nosuid,nodev,size=64m,mode=1777" },
      Binds: binds,
    },
  };
}
