import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Message } from "esbuild";
import type { Manifest } from "../../sdk/env/index.ts";
import { explainBundleErrors } from "../explain-bundle-errors.ts";

const DISPATCHER = fileURLToPath(new URL("../../sdk/env/create-dispatcher.ts", import.meta.url));

/**
 * Bundles a vm plugin's `entry` (which exports `environment`) and its npm dependencies, resolved from the
 * plugin folder, into one script for an isolate. The script installs `globalThis.__agentjet_call(json)`,
 * the protocol's instance side. An isolate is a browser-like runtime without Node APIs: packages'
 * `browser` fields apply (a builtin they map to false becomes an empty module), a `require()` of a builtin
 * inside try/catch is left to fail at run time (where the catch handles it), and any other import of a
 * builtin fails here, naming the dependency.
 */
export async function bundleVmPlugin(dir: string, manifest: Manifest, outFile: string): Promise<void> {
  const entry = resolve(dir, manifest.entry);
  const wrapper = [
    `import { environment } from ${JSON.stringify(entry)};`,
    `import { createDispatcher } from ${JSON.stringify(DISPATCHER)};`,
    "const dispatch = createDispatcher(environment);",
    "globalThis.__agentjet_call = async (json) => JSON.stringify(await dispatch(JSON.parse(json)));",
  ].join("\n");
  let result;
  try {
    result = await build({
      stdin: { contents: wrapper, resolveDir: dir, sourcefile: "agentjet-vm-entry.js", loader: "js" },
      absWorkingDir: dir,
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      mainFields: ["browser", "module", "main"],
      target: "es2022",
      logLevel: "silent",
    });
  } catch (err) {
    throw explainBundleErrors({ dir, name: manifest.name, entry: manifest.entry, errors: (err as { errors?: Message[] }).errors ?? [], forIsolate: true, cause: err });
  }
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, result.outputFiles[0]!.text);
}
