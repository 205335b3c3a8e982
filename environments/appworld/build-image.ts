import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildDockerImage } from "../../plugins/index.ts";
import { readManifest } from "../../hub/store/read-manifest.ts";

const PLUGIN_DIR = dirname(fileURLToPath(import.meta.url));

/** The local tag of the stand-in (TEST DOUBLE) image. */
export const STAND_IN_IMAGE = "agentjet-env/appworld-stand-in:0.1.0";
/** The local tag `real` builds by default. */
export const REAL_IMAGE = "agentjet-env/appworld:0.1.0";

/**
 * Builds an AppWorld image from this folder: `real` (the Dockerfile: python:3.12-slim + appworld + the
 * adapter; needs the network) or `stand-in` (stand-in/Dockerfile: the adapter and the stand-in server on
 * agentjet's offline node base). Returns the tag.
 * From the repo: `node bin/run-ts.js environments/appworld/build-image.ts real|stand-in [tag]`.
 */
export async function buildAppWorldImage(opts: { variant: "real" | "stand-in"; tag?: string; onProgress?: (line: string) => void }): Promise<string> {
  const manifest = readManifest(PLUGIN_DIR);
  const tag = opts.tag ?? (opts.variant === "real" ? REAL_IMAGE : STAND_IN_IMAGE);
  if (opts.variant === "real") {
    await buildDockerImage({ dir: PLUGIN_DIR, manifest, tag, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
    return tag;
  }
  const ctx = await mkdtemp(join(tmpdir(), "agentjet-appworld-stand-in-"));
  try {
    await build({ entryPoints: [join(PLUGIN_DIR, "stand-in", "main.ts")], outfile: join(ctx, "stand-in-server.mjs"), bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "silent" });
    await copyFile(join(PLUGIN_DIR, "stand-in", "Dockerfile"), join(ctx, "Dockerfile"));
    // The adapter is bundled from this folder exactly as for the real image; only the Dockerfile differs.
    await buildDockerImage({
      dir: ctx,
      manifest: { ...manifest, entry: join(PLUGIN_DIR, manifest.entry) },
      tag,
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    });
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
  return tag;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const variant = process.argv[2];
  if (variant !== "real" && variant !== "stand-in") {
    console.error("usage: build-image.ts real|stand-in [tag]");
    process.exit(2);
  }
  const tag = await buildAppWorldImage({ variant, ...(process.argv[3] ? { tag: process.argv[3] } : {}), onProgress: (l) => console.error(l) });
  console.log(tag);
}
