import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const require = createRequire(import.meta.url);
let compiled: Promise<string> | undefined;

/**
 * The host process starts bare (no TypeScript loader: booting tsx in every host would cost more than the
 * host itself), so its source is compiled once to a plain module in the temp folder, keyed by its
 * content, with isolated-vm imported by absolute path.
 */
export function resolveHostFile(): Promise<string> {
  compiled ??= compileHost();
  return compiled;
}

async function compileHost(): Promise<string> {
  const source = fileURLToPath(new URL("./vm-host.ts", import.meta.url));
  const ivmPath = require.resolve("isolated-vm");
  const text = readFileSync(source, "utf8");
  const hash = createHash("sha256").update(text).update(ivmPath).digest("hex").slice(0, 16);
  const out = join(tmpdir(), `agentjet-vm-host-${hash}.mjs`);
  if (existsSync(out)) return out;
  const result = await build({
    entryPoints: [source],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
    plugins: [
      {
        name: "absolute-isolated-vm",
        setup(b) {
          b.onResolve({ filter: /^isolated-vm$/ }, () => ({ path: ivmPath, external: true }));
        },
      },
    ],
  });
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, result.outputFiles[0]!.text);
  renameSync(tmp, out);
  return out;
}
