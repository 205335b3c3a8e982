import { join } from "node:path";
import { buildOnce, buildScratchImage, place, SANDBOX_USER, sharedLibraries } from "./scratch-image.ts";

export { SANDBOX_USER };
export const NODE_PATH = "/usr/local/bin/node";

/**
 * An offline base image for docker plugins, built once per Node version: FROM scratch with the host's
 * node binary, the shared libraries `ldd` lists and a passwd with the sandbox user. It has no /tmp on
 * purpose: Docker would copy that folder's (umask-stripped) mode onto the tmpfs each container mounts there.
 * Returns its tag.
 */
export const ensureNodeBaseImage = buildOnce(buildBase);

function buildBase(onProgress?: (line: string) => void): Promise<string> {
  return buildScratchImage({
    tag: `agentjet/node-base:${process.version.slice(1)}`,
    async fill(rootfs) {
      await place(process.execPath, join(rootfs, NODE_PATH));
      for (const lib of await sharedLibraries(process.execPath, true)) await place(lib, join(rootfs, lib));
    },
    env: "HOME=/tmp NODE_ENV=production",
    entrypoint: NODE_PATH,
    onProgress,
  });
}
