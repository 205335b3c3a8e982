import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GenerateTasksRequest, SolveRequest, Task } from "../sdk/env/index.ts";
import { TaskSchema } from "../sdk/env/schemas.ts";
import { buildDockerImage } from "./docker/build-docker-image.ts";
import { containerRuntimeRegistered } from "./docker/docker-client.ts";
import { createDockerDriver } from "./docker/docker-driver.ts";
import { SupervisedSession } from "./episode-session.ts";
import { ContainerRuntimeError, GenerateTasksError } from "./errors.ts";
import type { Driver } from "./instance.ts";
import { bundleVmPlugin } from "./isolated-vm/bundle-vm-plugin.ts";
import { createVmDriver } from "./isolated-vm/vm-driver.ts";
import { locateSplit, readTaskFile } from "./list-tasks.ts";
import { failed } from "./outcome.ts";
import { CONTAINER_RUNTIMES, type ContainerRuntime, type EnvironmentRuntime, type EpisodeSession, type OpenEnvironmentOptions, type Outcome } from "./runtime.ts";
import { shareInstances } from "./shared-instance.ts";
import { Supervisor } from "./supervisor.ts";

/** The tag a docker plugin's source folder is built under when no image is given (`env test <folder>`, a run config's `path`). */
export function sourceImageTag(name: string, version: string): string {
  return `agentjet-env/${name}:${version}`;
}

/**
 * Opens a plugin in the sandbox its manifest's `kind` names, behind a supervisor. Resolves once the
 * first `warm` instances have started (or failed to).
 */
export async function openEnvironment(opts: OpenEnvironmentOptions): Promise<EnvironmentRuntime> {
  const { manifest } = opts;
  const cleanups: Array<() => Promise<void>> = [];
  let driver: Driver;
  if (manifest.kind === "vm") {
    let bundlePath = opts.bundlePath;
    if (!bundlePath) {
      const tmp = await mkdtemp(join(tmpdir(), `agentjet-vm-${manifest.name}-`));
      cleanups.push(() => rm(tmp, { recursive: true, force: true }));
      bundlePath = join(tmp, "bundle.js");
      await bundleVmPlugin(opts.dir, manifest, bundlePath);
    }
    driver = await createVmDriver(manifest, bundlePath);
  } else {
    let image = opts.image ?? manifest.docker?.image;
    if (!image) {
      image = sourceImageTag(manifest.name, manifest.version);
      await buildDockerImage({ dir: opts.dir, manifest, tag: image });
    }
    const runtime = await resolveContainerRuntime(opts.containerRuntime);
    driver = await createDockerDriver({ manifest, image, mounts: opts.mounts ?? {}, runtime });
  }
  const perInstance = manifest.reusable ? (opts.episodesPerInstance ?? 1) : 1;
  if (perInstance > 1) driver = shareInstances(driver, perInstance);
  const supervisor = new Supervisor({
    driver,
    maxInstances: opts.maxInstances ?? 4,
    warm: opts.warm ?? 1,
    maxConcurrentStarts: opts.maxConcurrentStarts ?? 2,
    healthIntervalMs: opts.healthIntervalMs ?? 5_000,
    callTimeoutMs: manifest.limits.callTimeoutMs,
  });
  await supervisor.fill();

  async function generateTasks(input: GenerateTasksRequest): Promise<Outcome<Task[]>> {
    const r = await supervisor.callOnce("tasks", input);
    if (r.kind === "failed") return r;
    const tasks = TaskSchema.array().safeParse(r.value);
    if (!tasks.success) return failed("protocol", "generateTasks returned something that is not a list of tasks");
    return { kind: "ok", value: tasks.data.map((t) => ({ ...t, split: input.split })) };
  }

  return {
    manifest,
    async openEpisode(): Promise<Outcome<EpisodeSession>> {
      const r = await supervisor.acquire();
      if (r.kind === "failed") return r;
      return {
        kind: "ok",
        value: new SupervisedSession(supervisor, r.value, {
          timeoutMs: manifest.limits.callTimeoutMs,
          memoryMb: manifest.limits.memoryMb,
          reusable: manifest.reusable,
          reward: manifest.reward,
          agents: manifest.agents,
        }),
      };
    },
    async listTasks(split, options) {
      const source = locateSplit(manifest, split, opts.dir, opts.dataDir);
      if (source.kind === "file") return readTaskFile(source.path, split);
      const r = await generateTasks({ split, seed: options?.seed ?? 0, count: source.count });
      if (r.kind === "failed") throw new GenerateTasksError(`generating split "${split}" failed (${r.failure.kind}): ${r.failure.message}`);
      return r.value;
    },
    generateTasks,
    async solve(input: SolveRequest): Promise<Outcome<string>> {
      const r = await supervisor.callOnce("solve", input);
      if (r.kind === "failed") return r;
      if (typeof r.value !== "string") return failed("protocol", "solve returned something that is not a string");
      return { kind: "ok", value: r.value };
    },
    stats: () => supervisor.stats(),
    async close() {
      await supervisor.close();
      for (const c of cleanups) await c();
    },
  };
}

/** The option, else `AGENTJET_CONTAINER_RUNTIME`, else runc; a runtime the engine does not list fails here, not per start. */
async function resolveContainerRuntime(option: ContainerRuntime | undefined): Promise<ContainerRuntime> {
  const wanted = option ?? process.env.AGENTJET_CONTAINER_RUNTIME ?? "runc";
  if (!(CONTAINER_RUNTIMES as readonly string[]).includes(wanted)) {
    throw new ContainerRuntimeError(`unknown container runtime "${wanted}" (known: ${CONTAINER_RUNTIMES.join(", ")})`);
  }
  const runtime = wanted as ContainerRuntime;
  if (runtime !== "runc" && !(await containerRuntimeRegistered(runtime))) {
    throw new ContainerRuntimeError(
      `the Docker engine has no "${runtime}" runtime: install gVisor (Debian package runsc) and register it in /etc/docker/daemon.json ` +
        `("runtimes": { "runsc": { "path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"] } }), then reload dockerd (kill -HUP); .ci/run does this`,
    );
  }
  return runtime;
}
