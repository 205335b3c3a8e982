import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { ImageBuildError } from "../errors.ts";
import { buildImage } from "./build-image.ts";
import { dockerClient } from "./docker-client.ts";

const run = promisify(execFile);

/** The uid:gid every container runs as; the base image's passwd names it. */
export const SANDBOX_USER = "1000:1000";
export const NODE_PATH = "/usr/local/bin/node";

let pending: Promise<string> | undefined;

/**
 * An offline base image for docker plugins, built once per Node version: FROM scratch with the host's
 * node binary, the shared libraries `ldd` lists and a passwd with the sandbox user. It has no /tmp on
 * purpose: Docker would copy that folder's (umask-stripped) mode onto the tmpfs each container mounts there.
 * Returns its tag.
 */
export function ensureNodeBaseImage(onProgress?: (line: string) => void): Promise<string> {
  pending ??= buildBase(onProgress).catch((err: unknown) => {
    pending = undefined;
    throw err;
  });
  return pending;
}

async function buildBase(onProgress?: (line: string) => void): Promise<string> {
  const tag = `agentjet/node-base:${process.version.slice(1)}`;
  try {
    await dockerClient().getImage(tag).inspect();
    return tag;
  } catch {
    // Not built yet.
  }
  const ctx = await mkdtemp(join(tmpdir(), "agentjet-node-base-"));
  try {
    const rootfs = join(ctx, "rootfs");
    await place(process.execPath, join(rootfs, NODE_PATH));
    for (const lib of await sharedLibraries(process.execPath)) await place(lib, join(rootfs, lib));
    await mkdir(join(rootfs, "etc"), { recursive: true });
    await writeFile(join(rootfs, "etc/passwd"), "root:x:0:0:root:/root:/sbin/nologin\nagentjet:x:1000:1000:agentjet:/tmp:/sbin/nologin\n");
    await writeFile(join(rootfs, "etc/group"), "root:x:0:\nagentjet:x:1000:\n");
    await mkdir(join(rootfs, "app"), { recursive: true });
    await writeFile(join(rootfs, "app/.keep"), "");
    await writeFile(
      join(ctx, "Dockerfile"),
      [
        "FROM scratch",
        "COPY rootfs/ /",
        `USER ${SANDBOX_USER}`,
        "WORKDIR /app",
        "ENV HOME=/tmp NODE_ENV=production",
        `ENTRYPOINT ["${NODE_PATH}"]`,
        "",
      ].join("\n"),
    );
    await buildImage({ context: ctx, tag, ...(onProgress ? { onProgress } : {}) });
    return tag;
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
}

/** Copies the file a (possibly symlinked) path names, under the same path in the image. */
async function place(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await copyFile(from, to);
}

async function sharedLibraries(binary: string): Promise<string[]> {
  let stdout: string;
  try {
    ({ stdout } = await run("ldd", [binary]));
  } catch (err) {
    throw new ImageBuildError(`cannot list the shared libraries of ${binary} (ldd)`, err);
  }
  const libs = new Set<string>();
  for (const line of stdout.split("\n")) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.add(m[1]);
  }
  return [...libs];
}
