import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";

/** Folders that are not the plugin's code (dependencies, VCS, agentjet's own outputs): not hashed, not watched. */
export const IGNORED_DIRS: ReadonlySet<string> = new Set(["node_modules", ".git", ".agentjet"]);

/**
 * A plugin folder's content hash (sha256, hex) over its files' relative paths and bytes, for clients
 * whose plugin has no lockfile entry (a local plugin being edited). Editing any file changes it.
 */
export async function hashPluginDir(dir: string): Promise<string> {
  const files: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      if (IGNORED_DIRS.has(entry.name)) continue;
      const p = join(d, entry.name);
      if (entry.isDirectory()) await walk(p);
      else if (entry.isFile()) files.push(p);
    }
  };
  await walk(dir);
  files.sort();
  const h = createHash("sha256");
  for (const f of files) {
    h.update(relative(dir, f).split(sep).join("/"));
    h.update("\u0000");
    h.update(await readFile(f));
    h.update("\u0000");
  }
  return h.digest("hex");
}
