import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";

// Setup file of the `unit` project (vitest.projects.ts): a unit test that starts a process or opens a
// socket fails here, naming the rule, instead of quietly slowing the edit loop.
class UnitGuardError extends Error {
  readonly code = "AJ_ERR_UNIT_GUARD";
}

function forbid(what: string): never {
  throw new UnitGuardError(`a unit test may not ${what}: list this file under integration (or e2e) in vitest.projects.ts`);
}

/** esbuild's own service binary: it bundles a worker thread's module (server/worker-bundle.ts) the first time one starts on a machine. */
function isEsbuild(file: unknown): boolean {
  return typeof file === "string" && /[\\/]esbuild(\.exe)?$/.test(file);
}

const methods = childProcess as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const) {
  const real = methods[name]!;
  methods[name] = (...args: unknown[]) => (isEsbuild(args[0]) ? real(...args) : forbid(`start a child process (${name})`));
}
syncBuiltinESMExports();
net.Server.prototype.listen = function listen(): never {
  return forbid("listen on a socket");
};
net.Socket.prototype.connect = function connect(): never {
  return forbid("connect a socket");
};
