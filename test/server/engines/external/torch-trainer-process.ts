import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const TORCH_TRAINER_DIR = fileURLToPath(new URL("../../../../server/engines/torch-trainer/", import.meta.url));

export interface TorchTrainerProcess {
  url: string;
  /** Everything the service printed. */
  output(): string;
  stop(): Promise<void>;
  /** SIGKILL: the service dies as in a crash, answering nothing more. */
  kill(): Promise<void>;
}

/**
 * Starts the REAL Python trainer service (`python -m agentjet_trainer`) on a free loopback port with the
 * plain-torch tiny model on CPU, full-weight mode, and resolves once it listens.
 */
export function startTorchTrainer(python: string, opts: { vocabSize: number; publishDir: string; args?: string[] }): Promise<TorchTrainerProcess> {
  const args = ["-m", "agentjet_trainer", "--model", "agentjet-tiny", "--vocab-size", String(opts.vocabSize), "--mode", "full"];
  args.push("--device", "cpu", "--host", "127.0.0.1", "--port", "0", "--publish-dir", opts.publishDir, "--lr", "1e-3", ...(opts.args ?? []));
  const child: ChildProcess = spawn(python, args, { cwd: TORCH_TRAINER_DIR, env: { ...process.env, OMP_NUM_THREADS: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) {
        child.stdout!.off("data", onData);
        child.stdout!.on("data", (more: Buffer) => (out += more.toString()));
        resolve({
          url: m[1]!,
          output: () => out,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            await exited;
          },
          async kill() {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
            await exited;
          },
        });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => reject(new Error(`the trainer exited (${code}) before listening:\n${out}`)));
    child.once("error", reject);
  });
}
