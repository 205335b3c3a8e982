import { existsSync, lstatSync, mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../registry/load-registry.ts";

/**
 * Makes `agentjet` importable from a plugin folder (`node_modules/agentjet` -> this installation), the way
 * a peer dependency would be: plugins outside this repository import the SDK from it, for types and for a
 * docker entry's `serveStdio`. A plugin that installs its own `agentjet` keeps it.
 */
export function linkAgentjet(dir: string): void {
  const link = join(dir, "node_modules", "agentjet");
  if (existsSync(link) || lstatSync(link, { throwIfNoEntry: false })) return;
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(REPO_ROOT, link, "dir");
}
