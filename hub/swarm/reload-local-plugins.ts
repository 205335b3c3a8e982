import type { EnvironmentRuntime } from "../../plugins/index.ts";
import type { ClientEnvironment, SwarmClient } from "../../sdk/swarm/index.ts";
import type { ClientEnvSource } from "./client-environments.ts";
import { hashPluginDir } from "./hash-plugin-dir.ts";
import { watchPluginDir } from "./watch-plugin-dir.ts";

export interface ReloadLocalPluginsOptions {
  sources: readonly ClientEnvSource[];
  /** The open environments by name; a reload replaces its entry. */
  opened: Map<string, ClientEnvironment>;
  client: SwarmClient;
  log: (line: string) => void;
  /** Quiet time after the last change before reloading (default 100 ms). */
  debounceMs?: number;
  /** After each reload is announced (benchmarks, tests). */
  onReload?: (name: string, env: ClientEnvironment) => void;
}

/**
 * `agentjet client --watch`: re-opens a local plugin when its files change (replacing saves included)
 * and announces the new code hash. Episodes already running finish on the old build, which is closed
 * once they have; the next episode runs the new one. An edit that leaves the hash as it was (a save
 * without changes, an editor's temp file come and gone) reloads nothing.
 */
export function reloadLocalPlugins(o: ReloadLocalPluginsOptions): { close(): Promise<void> } {
  const retiring = new Set<Promise<void>>();
  const watchers = o.sources
    .filter((s) => s.local)
    .map((s) => {
      let running: Promise<void> | null = null;
      let again = false;
      const reload = async (): Promise<void> => {
        const current = o.opened.get(s.name);
        if (current && (await hashPluginDir(s.dir)) === current.hash) return;
        let next: ClientEnvironment;
        try {
          next = await s.open();
        } catch (err) {
          o.log(`${s.name}: re-opening failed, keeping the previous build: ${(err as Error).message}`);
          return;
        }
        const old = o.opened.get(s.name);
        o.opened.set(s.name, next);
        o.client.setEnvironments([...o.opened.values()]);
        o.log(`${s.name} reloaded: code hash ${next.hash.slice(0, 12)}${old ? ` (was ${old.hash.slice(0, 12)})` : ""}; the next episode runs it`);
        o.onReload?.(s.name, next);
        if (old) retire(old.runtime);
      };
      const trigger = (): void => {
        if (running) {
          again = true;
          return;
        }
        // A file that vanished mid-hash (an editor's temp file) fails this try; its rename triggers the next.
        running = reload()
          .catch((err: unknown) => o.log(`${s.name}: reload failed, keeping the previous build: ${err instanceof Error ? err.message : String(err)}`))
          .finally(() => {
            running = null;
            if (again) {
              again = false;
              trigger();
            }
          });
      };
      return watchPluginDir(s.dir, trigger, o.debounceMs !== undefined ? { debounceMs: o.debounceMs } : {});
    });
  const retire = (runtime: EnvironmentRuntime): void => {
    const p = o.client
      .released(runtime)
      .then(() => runtime.close())
      .catch(() => undefined)
      .finally(() => retiring.delete(p));
    retiring.add(p);
  };
  return {
    async close() {
      for (const w of watchers) w.close();
      await Promise.all(retiring);
    },
  };
}
