#!/usr/bin/env node
// Runs a TypeScript entry with tsx, under the Node flags that isolated-vm asks for.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error("usage: run-ts.js <entry.ts> [args...]");
  process.exit(2);
}
const result = spawnSync(
  process.execPath,
  ["--no-node-snapshot", "--import", "tsx", entry, ...args],
  { stdio: "inherit", cwd: process.cwd(), env: process.env },
);
process.exit(result.status ?? 1);

