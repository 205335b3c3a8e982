import { mkdir, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Message } from "esbuild";
import type { Manifest } from "../../sdk/env/manifest.ts";
import { BundleBuiltinError, BundleFailedError } from "../errors.ts";

const DISPATCHER = fileURLToPath(new URL("../../sdk/env/create-dispatcher.ts", import.meta.url));
const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/**
 * Bundles a vm plugin's `entry` (which exports `environment`) and its npm dependencies, resolved from the
 * plugin folder, into one script for an isolate. The script installs `globalThis.__agentjet_call(json)`,
 * the protocol's instance side. Node builtins do not exist in an isolate, so importing one fails here.
 */
export async function bundleVmPlugin(dir: string, manifest: Manifest, outFile: string): Promise<void> {
  const entry = resolve(dir, manifest.entry);
  const wrapper = [
    `import { environment } from ${JSON.stringify(entry)};`,
    `import { createDispatcher } from ${JSON.stringify(DISPATCHER)};`,
    "const dispatch = createDispatcher(environment);",
    "globalThis.__agentjet_call = async (json) => JSON.stringify(await dispatch(JSON.parse(json)));",
  ].join("\n");
  const builtinsUsed: string[] = [];
  let result;
  try {
    result = await build({
      stdin: { contents: wrapper, resolveDir: dir, sourcefile: "agentjet-vm-entry.js", loader: "js" },
      absWorkingDir: dir,
      bundle: true,
      write: false,
      format: "iife",
      platform: "neutral",
      mainFields: ["module", "main"],
      conditions: ["import", "default"],
      target: "es2022",
      logLevel: "silent",
      plugins: [
        {
          name: "no-node-builtins",
          setup(b) {
            b.onResolve({ filter: /.*/ }, (args) => {
              if (!BUILTINS.has(args.path)) return undefined;
              builtinsUsed.push(`"${args.path}" (imported by ${relative(dir, args.importer) || args.importer})`);
              return { path: args.path, namespace: "node-builtin" };
            });
            b.onLoad({ filter: /.*/, namespace: "node-builtin" }, () => ({ contents: "", loader: "js" }));
          },
        },
      ],
    });
  } catch (err) {
    const errors = (err as { errors?: Message[] }).errors ?? [];
    const detail = errors.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ""}${e.text}`).join("; ");
    throw new BundleFailedError(`could not bundle ${manifest.name} from ${manifest.entry}: ${detail || String(err)}`, err);
  }
  if (builtinsUsed.length > 0) {
    throw new BundleBuiltinError(
      `${manifest.name}: vm plugins run in an isolate without Node APIs, but the code imports ${builtinsUsed.join(", ")}. ` +
        `Remove the import, or make it a docker plugin (kind: "docker").`,
    );
  }
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, result.outputFiles[0]!.text);
}
