import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { ImageBuildError } from "../errors.ts";
import { buildImage } from "./build-image.ts";
import { dockerClient } from "./docker-client.ts";

const run = promisify(execFile);

/** The uid:gid every container runs as; the base images' passwd names it. */
export const SANDBOX_USER = "1000:1000";

export interface ScratchImage {
  tag: string;
  /** Places the runtime's files under `rootfs` (see `place` and `sharedLibraries`). */
  fill: (rootfs: string) => Promise<void>;
  /** The image's ENV line, `K=V` pairs. */
  env: string;
  entrypoint: string;
  onProgress?: ((line: string) => void) | undefined;
}

/**
 * Builds an offline base image FROM scratch unless `tag` exists: the files `fill` places, a passwd and
 * group with the sandbox user, and an empty /app. No shell and no /tmp on purpose: Docker would copy
 * that folder's (umask-stripped) mode onto the tmpfs each container mounts there. Returns the tag.
 */
export async function buildScratchImage(o: ScratchImage): Promise<string> {
  try {
    await dockerClient().getImage(o.tag).inspect();
    return o.tag;
  } catch {
    // Not built yet.
  }
  const ctx = await mkdtemp(join(tmpdir(), "agentjet-base-"));
  try {
    const rootfs = join(ctx, "rootfs");
    await o.fill(rootfs);
    await mkdir(join(rootfs, "etc"), { recursive: true });
    await writeFile(join(rootfs, "etc/passwd"), "root:x:0:0:root:/root:/sbin/nologin\nagentjet:x:1000:1000:agentjet:/tmp:/sbin/nologin\n");
    await writeFile(join(rootfs, "etc/group"), "root:x:0:\nagentjet:x:1000:\n");
    await mkdir(join(rootfs, "app"), { recursive: true });
    await writeFile(join(rootfs, "app/.keep"), "");
    const dockerfile = ["FROM scratch", "COPY rootfs/ /", `USER ${SANDBOX_USER}`, "WORKDIR /app", `ENV ${o.env}`, `ENTRYPOINT ["${o.entrypoint}"]`, ""];
    await writeFile(join(ctx, "Dockerfile"), dockerfile.join("\n"));
    await buildImage({ context: ctx, tag: o.tag, ...(o.onProgress ? { onProgress: o.onProgress } : {}) });
    return o.tag;
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
}

/** Copies the file a (possibly symlinked) path names, to `to` in the image's tree. */
export async function place(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await copyFile(from, to);
}

/**
 * The shared libraries `ldd` lists for `binary`. A file ldd cannot read (statically linked, not ELF)
 * has none, unless `required`, where that is an ImageBuildError.
 */
export async function sharedLibraries(binary: string, required = false): Promise<string[]> {
  let stdout: string;
  try {
    ({ stdout } = await run("ldd", [binary]));
  } catch (err) {
    if (required) throw new ImageBuildError(`cannot list the shared libraries of ${binary} (ldd)`, err);
    return [];
  }
  const libs = new Set<string>();
  for (const line of stdout.split("\n")) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.add(m[1]);
  }
  return [...libs];
}

/** `build` at most once per process: callers share its promise; after a failure the next caller builds again. */
export function buildOnce(build: (onProgress?: (line: string) => void) => Promise<string>): (onProgress?: (line: string) => void) => Promise<string> {
  let pending: Promise<string> | undefined;
  return (onProgress) => {
    pending ??= build(onProgress).catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
