import { existsSync, type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import { join, sep } from "node:path";
import { IGNORED_DIRS } from "./hash-plugin-dir.ts";

export interface WatchPluginDirOptions {
  /** Quiet time after the last change before `onChange` runs (default 100 ms): one save is one call. */
  debounceMs?: number;
}

/**
 * Calls `onChange` (debounced) after any file under `dir` is written, created, deleted or replaced.
 * It watches every folder, not every file: an editor's replacing save (`sed -i`, write-to-temp then
 * rename) swaps the file's inode, which ends a watch on the file (Node 20's recursive watch on Linux is
 * one); a folder's watch sees the rename and keeps seeing later writes. New sub-folders are watched as
 * they appear, and a replaced folder is watched again.
 */
export function watchPluginDir(dir: string, onChange: () => void, options: WatchPluginDirOptions = {}): { close(): void } {
  const debounceMs = options.debounceMs ?? 100;
  const watchers = new Map<string, FSWatcher>();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const changed = (): void => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      if (!closed) onChange();
    }, debounceMs);
  };
  const unwatch = (path: string): void => {
    for (const [p, w] of watchers) {
      if (p === path || p.startsWith(path + sep)) {
        w.close();
        watchers.delete(p);
      }
    }
  };
  const watchTree = (path: string): void => {
    if (closed || !isDir(path)) return;
    unwatch(path);
    let w: FSWatcher;
    try {
      w = watch(path, (event, name) => {
        if (name === null) return changed();
        const top = name.split(/[\\/]/)[0]!;
        if (IGNORED_DIRS.has(top)) return;
        const child = join(path, name);
        // A folder created, or replaced by a rename, is watched anew; one removed stops being watched.
        if (event === "rename") {
          if (isDir(child)) watchTree(child);
          else if (!existsSync(child)) unwatch(child);
        }
        changed();
      });
    } catch {
      return;
    }
    w.on("error", () => {
      w.close();
      if (watchers.get(path) === w) watchers.delete(path);
    });
    w.unref();
    watchers.set(path, w);
    for (const e of readEntries(path)) if (e.isDirectory() && !IGNORED_DIRS.has(e.name)) watchTree(join(path, e.name));
  };
  watchTree(dir);
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readEntries(path: string) {
  try {
    return readdirSync(path, { withFileTypes: true });
  } catch {
    return [];
  }
}
