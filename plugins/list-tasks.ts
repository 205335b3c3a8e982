import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { Manifest, Task } from "../sdk/env/index.ts";
import { TaskSchema } from "../sdk/env/schemas.ts";
import { ExternalSplitError, TaskFileError, UnknownSplitError } from "./errors.ts";

/** Reads a JSONL task file: one task per line, blank lines skipped; `split` fills tasks that name none. */
export async function readTaskFile(path: string, split: string): Promise<Task[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new TaskFileError(`cannot read the task file ${path}`, err);
  }
  const tasks: Task[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      throw new TaskFileError(`${path}:${i + 1}: not JSON`, err);
    }
    const withSplit = raw && typeof raw === "object" && !("split" in raw) ? { ...raw, split } : raw;
    const task = TaskSchema.safeParse(withSplit);
    if (!task.success) throw new TaskFileError(`${path}:${i + 1}: not a task (${task.error.issues[0]?.message ?? "invalid"})`);
    tasks.push(task.data);
  }
  return tasks;
}

/** Where a split's tasks come from on the host, or `generate` when the sandbox makes them. */
export type SplitSource = { kind: "file"; path: string } | { kind: "generate"; count: number };

export function locateSplit(manifest: Manifest, split: string, dir: string, dataDir: string | undefined): SplitSource {
  const s = manifest.splits[split];
  if (!s) throw new UnknownSplitError(split, Object.keys(manifest.splits));
  if ("generate" in s) return { kind: "generate", count: s.generate };
  if ("file" in s) {
    if (isAbsolute(s.file)) return { kind: "file", path: s.file };
    // An installed store holds prepared files; a plugin's own files stay in its folder.
    const inStore = dataDir === undefined ? undefined : resolve(dataDir, s.file);
    return { kind: "file", path: inStore && existsSync(inStore) ? inStore : resolve(dir, s.file) };
  }
  if (!dataDir) throw new ExternalSplitError(split);
  return { kind: "file", path: resolve(dataDir, s.external) };
}
