import { existsSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative, resolve } from "node:path";
import type { Message } from "esbuild";
import { BundleBuiltinError, BundleFailedError, BundleMissingDependencyError } from "./errors.ts";

const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const UNRESOLVED = /^Could not resolve "([^"]+)"/;

/** The npm package a bundled file belongs to (`node_modules/<name>` or `node_modules/@scope/name`), or undefined for the plugin's own code. */
function packageOf(file: string): string | undefined {
  const parts = file.split(/[\\/]/);
  const at = parts.lastIndexOf("node_modules");
  if (at < 0) return undefined;
  const first = parts[at + 1];
  return first?.startsWith("@") ? `${first}/${parts[at + 2] ?? ""}` : first;
}

/** The bare package name of an import specifier (`lodash/fp` -> `lodash`, `@a/b/c` -> `@a/b`), or undefined for a relative path. */
function bareName(spec: string): string | undefined {
  if (spec.startsWith(".") || spec.startsWith("/")) return undefined;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

function declaredDependencies(dir: string): Set<string> {
  const path = join(dir, "package.json");
  if (!existsSync(path)) return new Set();
  const pkg = JSON.parse(readFileSync(path, "utf8")) as { dependencies?: Record<string, string> };
  return new Set(Object.keys(pkg.dependencies ?? {}));
}

/**
 * Turns esbuild's resolve errors into coded errors that say what to change: a Node builtin a dependency
 * truly needs (names the dependency and the builtin), or a package missing from node_modules (run npm
 * install). `forIsolate`: the bundle runs in an isolate, where builtins do not exist.
 */
export function explainBundleErrors(opts: { dir: string; name: string; entry: string; errors: Message[]; forIsolate: boolean; cause: unknown }): Error {
  const builtins: string[] = [];
  const missing = new Map<string, string>();
  const other: string[] = [];
  for (const e of opts.errors) {
    // esbuild names files relative to its working directory, the plugin folder.
    const file = e.location?.file ? relative(opts.dir, resolve(opts.dir, e.location.file)) : opts.entry;
    const spec = UNRESOLVED.exec(e.text)?.[1];
    if (spec && BUILTINS.has(spec) && opts.forIsolate) {
      const pkg = packageOf(file);
      builtins.push(`${pkg ? `the dependency "${pkg}"` : "your code"} imports the Node builtin "${spec}" (${file}:${e.location?.line ?? 0})`);
    } else if (spec && bareName(spec) && !BUILTINS.has(spec)) {
      missing.set(bareName(spec) as string, file);
    } else other.push(`${e.location ? `${file}:${e.location.line}: ` : ""}${e.text}`);
  }
  if (builtins.length) {
    return new BundleBuiltinError(
      `${opts.name}: vm plugins run in an isolate without Node APIs, but ${builtins.join("; ")}. ` +
        "A require() inside try/catch and a builtin that the package's \"browser\" field maps to false are fine; this one is neither. " +
        `Use a dependency (or version) that does not need it, or make this a docker plugin (kind: "docker" in agentjet.env.json).`,
    );
  }
  if (missing.size) {
    const declared = declaredDependencies(opts.dir);
    const lines = [...missing].map(([pkg, file]) =>
      declared.has(pkg)
        ? `"${pkg}" (imported by ${file}) is in package.json but not installed: run \`npm install\` in ${opts.dir}`
        : `"${pkg}" (imported by ${file}) is not a dependency: run \`npm install ${pkg}\` in ${opts.dir}`,
    );
    return new BundleMissingDependencyError(`could not bundle ${opts.name}: ${lines.join("; ")}`);
  }
  return new BundleFailedError(`could not bundle ${opts.name} from ${opts.entry}: ${other.join("; ") || String(opts.cause)}`, opts.cause);
}

