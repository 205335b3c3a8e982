import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { bundleWorker } from "../worker-bundle.ts";
import { QWEN3_FILES } from "./qwen3-files.ts";
import type { Piece } from "./qwen3-text.ts";
import type { EncodeResult, EncodeTask } from "./qwen3-worker.ts";
import { packSegments, unpackIds } from "./shared-text.ts";

const require = createRequire(import.meta.url);
const WORKER_SOURCES = ["./qwen3-worker.ts", "./qwen3-text.ts", "./shared-text.ts"].map((p) => fileURLToPath(new URL(p, import.meta.url)));

let pool: Promise<Piscina> | undefined;

/**
 * The encode thread's bundle (see server/worker-bundle.ts): the tokenizer package imported by path, and
 * the paths of its JSON files written in (the bundle lives in the temp folder, where neither resolves).
 */
function workerFile(): Promise<string> {
  const pkg = join(dirname(require.resolve("@lenml/tokenizers")), "main.mjs");
  const files = `export const QWEN3_FILES = ${JSON.stringify(QWEN3_FILES)};`;
  return bundleWorker({
    name: "qwen3-worker",
    sources: WORKER_SOURCES,
    extra: pkg + files,
    plugins: [
      {
        name: "tokenizer-by-path",
        setup: (b) => {
          b.onResolve({ filter: /^@lenml\/tokenizers$/ }, () => ({ path: pkg, external: true }));
          b.onResolve({ filter: /\/qwen3-files\.ts$/ }, () => ({ path: "qwen3-files", namespace: "agentjet" }));
          b.onLoad({ filter: /^qwen3-files$/, namespace: "agentjet" }, () => ({ contents: files, loader: "js" }));
        },
      },
    ],
  });
}

/**
 * One thread per process tokenizes large prompts (it holds its own copy of the tokenizer, loaded on its
 * first task). Idle, it does not keep the process alive.
 */
function encodePool(): Promise<Piscina> {
  pool ??= workerFile().then((filename) => new Piscina({ filename, minThreads: 1, maxThreads: 1, idleTimeout: 10 * 60_000 }));
  return pool;
}

/**
 * Tokenizes segments' pieces on the encode thread: each segment's ids, in order. The text crosses in
 * shared memory written a slice at a time (`maybeYield` between slices), the ids come back shared.
 */
export async function encodeInWorker(segments: readonly (readonly Piece[])[], maybeYield: () => Promise<void>): Promise<Int32Array[]> {
  const p = await encodePool();
  const task: EncodeTask = await packSegments(segments, maybeYield);
  return unpackIds((await p.run(task)) as EncodeResult);
}

/**
 * Starts the encode thread and loads its tokenizer now (the server does this when it starts), so the
 * first large request does not wait for it. A thread that cannot start is reported by the first request
 * that needs it.
 */
export function warmEncodePool(): void {
  encodePool()
    .then((p) => p.run({ chunks: [], segments: [] } satisfies EncodeTask))
    .catch(() => {});
}

/**
 * Stops the encode thread. It lives as long as the process's qwen3 tokenizer (one per process, shared by
 * servers); idle, it keeps nothing alive, so only benches that want its memory back call this.
 */
export async function closeEncodePool(): Promise<void> {
  const p = pool;
  pool = undefined;
  if (p) await (await p).destroy();
}
