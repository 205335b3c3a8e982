import { type ChildProcess, spawn } from "node:child_process";
import type { AppWorldClient } from "./appworld-client.ts";
import { AppWorldStartError } from "./errors.ts";

const OUTPUT_KEPT = 4_000;

/**
 * Starts AppWorld's environment server (`command` plus `--port <port>`) in `cwd` and polls `GET /` until
 * it answers: with the real data that takes 60-120 s. Its output goes to our stderr (stdout belongs to
 * the protocol). Fails with the server's output tail when it exits or does not answer within `timeoutMs`.
 */
export async function startAppWorldServer(opts: {
  command: string[];
  port: number;
  cwd: string;
  client: AppWorldClient;
  timeoutMs: number;
  pollMs?: number;
}): Promise<ChildProcess> {
  const [bin, ...args] = opts.command;
  if (!bin) throw new AppWorldStartError("no server command");
  const child = spawn(bin, [...args, "--port", String(opts.port)], { cwd: opts.cwd, stdio: ["ignore", "pipe", "pipe"], env: process.env });
  let tail = "";
  const keep = (chunk: Buffer) => {
    process.stderr.write(chunk);
    tail = (tail + chunk.toString("utf8")).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exited: string | undefined;
  child.on("error", (err) => (exited = `could not run ${bin}: ${err.message}`));
  child.on("exit", (code, signal) => (exited ??= `exited with ${signal ?? `code ${code}`}`));
  const deadline = Date.now() + opts.timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new AppWorldStartError(`the AppWorld environment server (${opts.command.join(" ")}) ${exited} before answering; its output:\n${tail}`);
    if (await opts.client.ping(1_000)) return child;
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
  }
  child.kill("SIGKILL");
  throw new AppWorldStartError(`the AppWorld environment server did not answer GET / within ${Math.round(opts.timeoutMs / 1000)} s; its output:\n${tail}`);
}
