import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { build, type Message } from "esbuild";
import type { Manifest } from "../../sdk/env/index.ts";
import { explainBundleErrors } from "../explain-bundle-errors.ts";
import { buildImage } from "./build-image.ts";
import { ensureNodeBaseImage } from "./node-base-image.ts";
import { ensurePythonBaseImage } from "./python-base-image.ts";

/** An entry esbuild can bundle for Node; an entry in another language (env.py) is copied by the Dockerfile as it is. */
const JS_ENTRY = /\.(m|c)?(t|j)sx?$/;

/** Where the bundled entry lands in the build context; a plugin's Dockerfile copies it from here. */
export const BUNDLED_ENTRY = "agentjet/entry.mjs";

/**
 * Builds a docker plugin's image locally, never pulling. The build context is the plugin folder (without
 * node_modules) plus `agentjet/entry.mjs`: the plugin's `entry` bundled with its dependencies for Node.
 * The Dockerfile receives the offline base image's tag as the build arg `AGENTJET_NODE_BASE`.
 */
export async function buildDockerImage(opts: {
  dir: string;
  manifest: Manifest;
  tag: string;
  onProgress?: (line: string) => void;
}): Promise<void> {
  const base = await ensureNodeBaseImage(opts.onProgress);
  const ctx = await mkdtemp(join(tmpdir(), `agentjet-image-${opts.manifest.name}-`));
  try {
    await cp(opts.dir, ctx, {
      recursive: true,
      filter: (src) => !["node_modules", ".git"].includes(basename(src)),
    });
    if (JS_ENTRY.test(opts.manifest.entry)) await bundleNodeEntry(opts.dir, opts.manifest, join(ctx, BUNDLED_ENTRY));
    const dockerfile = opts.manifest.docker?.dockerfile ?? "Dockerfile";
    // The Python base is built only for a Dockerfile that asks for it.
    const wantsPython = (await readFile(join(ctx, dockerfile), "utf8").catch(() => "")).includes("AGENTJET_PYTHON_BASE");
    await buildImage({
      context: ctx,
      tag: opts.tag,
      dockerfile,
      buildArgs: { AGENTJET_NODE_BASE: base, ...(wantsPython ? { AGENTJET_PYTHON_BASE: await ensurePythonBaseImage(opts.onProgress) } : {}) },
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    });
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
}

async function bundleNodeEntry(dir: string, manifest: Manifest, outFile: string): Promise<void> {
  try {
    await build({
      entryPoints: [resolve(dir, manifest.entry)],
      outfile: outFile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "silent",
      // Less to parse at every container start; names stay for readable stacks.
      minifyWhitespace: true,
      minifySyntax: true,
      // Bundled CommonJS dependencies may still call require().
      banner: { js: 'import { createRequire as __ajRequire } from "node:module"; const require = __ajRequire(import.meta.url);' },
    });
  } catch (err) {
    throw explainBundleErrors({ dir, name: manifest.name, entry: manifest.entry, errors: (err as { errors?: Message[] }).errors ?? [], forIsolate: false, cause: err });
  }
}
