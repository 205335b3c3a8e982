import { watch, type FSWatcher } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import type { Workflow } from "../../sdk/swarm/index.ts";
import { WorkflowExportError } from "./errors.ts";

/**
 * Loads a user's workflow file (`export const workflow`, or a default export). It is bundled with its
 * local imports (npm packages stay external and resolve from the file's folder) into a fresh module each
 * time it changed, because Node caches modules by path. With `watch`, an edit anywhere in the file's
 * folder marks it stale and the next episode loads the new code, without restarting the client or server.
 */
export function createWorkflowLoader(file: string, options: { watch: boolean; onReload?: (version: number) => void }): {
  load: () => Promise<Workflow>;
  close: () => void;
} {
  const path = resolve(file);
  const outDir = join(dirname(path), ".agentjet", "workflows");
  let version = 0;
  let loaded: { version: number; workflow: Workflow } | null = null;
  let loading: Promise<Workflow> | null = null;
  let watcher: FSWatcher | null = null;
  if (options.watch) {
    // The folder, not the file: editors often save by replacing the file, which ends a file watch.
    watcher = watch(dirname(path), (_event, name) => {
      if (name !== null && name.startsWith(".agentjet")) return;
      version += 1;
    });
    watcher.unref();
  }
  const importFresh = async (v: number): Promise<Workflow> => {
    await mkdir(outDir, { recursive: true });
    const out = join(outDir, `${basename(path).replace(/\.[^.]+$/, "")}-${process.pid}-${v}.mjs`);
    await build({ entryPoints: [path], outfile: out, bundle: true, platform: "node", format: "esm", packages: "external", logLevel: "silent", target: "node20" });
    try {
      const mod = (await import(pathToFileURL(out).href)) as { workflow?: unknown; default?: unknown };
      const workflow = mod.workflow ?? mod.default;
      if (typeof workflow !== "function") throw new WorkflowExportError(file);
      return workflow as Workflow;
    } finally {
      await rm(out, { force: true });
    }
  };
  return {
    async load() {
      if (loaded && loaded.version === version) return loaded.workflow;
      if (loading) return loading;
      const v = version;
      loading = importFresh(v).finally(() => (loading = null));
      const workflow = await loading;
      loaded = { version: v, workflow };
      if (v > 0) options.onReload?.(v);
      return workflow;
    },
    close() {
      watcher?.close();
    },
  };
}
