#!/usr/bin/env node
// The agentjet CLI. Re-executes itself with --no-node-snapshot (isolated-vm needs it) and tsx.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const cli = join(root, "hub", "cli", "main.ts");

if (process.env.AGENTJET_CHILD === "1") {
  // The wrapper gone (killed with SIGKILL, which it cannot forward): stop as on SIGTERM, cleanly, instead
  // of training on unseen under pid 1. The channel alone never keeps this process alive.
  if (process.channel) {
    process.channel.unref();
    process.once("disconnect", () => process.kill(process.pid, "SIGTERM"));
  }
  await import(pathToFileURL(cli).href);
} else {
  const tsx = pathToFileURL(join(root, "node_modules", "tsx", "dist", "esm", "index.mjs")).href;
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--import", tsx, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: ["inherit", "inherit", "inherit", "ipc"], env: { ...process.env, AGENTJET_CHILD: "1" } },
  );
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
}
