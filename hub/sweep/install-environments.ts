import { isAbsolute, resolve } from "node:path";
import type { RunConfig } from "../../server/config/index.ts";
import { addEnvironment, resolveInstalled } from "../store/index.ts";

/**
 * Installs, one after the other, the environments the sweep's runs name that the project lacks, before
 * any run starts: runs started side by side would otherwise each install the same one into the same
 * store at once. A run whose options differ from the installed ones still reinstalls it itself.
 */
export async function installMissingEnvironments(configs: readonly RunConfig[], projectDir: string, log: (line: string) => void): Promise<void> {
  const seen = new Set<string>();
  for (const config of configs) {
    for (const entry of config.environments) {
      const key = `${entry.name}@${entry.version ?? ""}`;
      if (entry.path !== undefined || seen.has(key)) continue;
      seen.add(key);
      if (resolveInstalled(entry.name, entry.version, { projectDir })) continue;
      const options: Record<string, string> = {};
      for (const [k, v] of Object.entries(entry.options)) options[k] = typeof v === "string" ? v : JSON.stringify(v);
      const { data, ...rest } = options;
      log(`${entry.name}: not installed; installing it before the runs start`);
      await addEnvironment({
        name: entry.name,
        ...(entry.version ? { version: entry.version } : {}),
        projectDir,
        ...(data ? { data: isAbsolute(data) ? data : resolve(projectDir, data) } : {}),
        options: rest,
        onProgress: log,
      });
    }
  }
}
