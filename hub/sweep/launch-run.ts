import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { type RunEvent, RunEventSchema } from "../train/events.ts";

const REPO = join(import.meta.dirname, "..", "..");
const BIN = join(REPO, "bin", "agentjet.js");
const TSX = pathToFileURL(join(REPO, "node_modules", "tsx", "dist", "esm", "index.mjs")).href;
/** Standard error lines a failed run's `run-end` quotes. */
const STDERR_TAIL = 8;

/** How one start of a run ended: an outcome, whatever the child did. */
export type RunOutcome =
  | { kind: "done"; exitCode: 0 }
  | { kind: "interrupted"; exitCode: number | null }
  | { kind: "failed"; exitCode: number | null; signal: string | null; error: string };

export interface LaunchedRun {
  pid: number;
  /** Asks the run to stop cleanly (SIGINT: it aborts in-flight episodes, checkpoints and exits 130); a second call stops it at once. */
  interrupt(): void;
  ended: Promise<RunOutcome>;
}

export interface LaunchRunOptions {
  /** `train <config> --run-dir <runDir>`, or `train --resume <runDir>`. */
  mode: { kind: "fresh"; config: string } | { kind: "resume" };
  runDir: string;
  /** Standard output and error of the run, appended. */
  logFile: string;
  /** The working directory: the project (`.agentjet/`, relative data paths). */
  projectDir: string;
  onEvent?: (e: RunEvent) => void;
}

/**
 * Starts `node bin/agentjet.js train ... --json` as a child process. It gets its own process group, so
 * a Ctrl-C at the terminal reaches the sweep alone, which passes it on once; its stdout is a pipe to
 * the sweep, so a sweep killed outright leaves it writing into a closed pipe.
 */
export function launchRun(o: LaunchRunOptions): LaunchedRun {
  mkdirSync(dirname(o.logFile), { recursive: true });
  const log = createWriteStream(o.logFile, { flags: "a" });
  const trainArgs = o.mode.kind === "fresh" ? ["train", o.mode.config, "--run-dir", o.runDir, "--json"] : ["train", "--resume", o.runDir, "--json"];
  log.write(`# ${new Date().toISOString()} agentjet ${trainArgs.join(" ")}\n`);
  // bin/agentjet.js re-executes itself with these flags; passing them here makes the child the train process itself (one pid to signal).
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", TSX, BIN, ...trainArgs], {
    cwd: o.projectDir,
    env: { ...process.env, AGENTJET_CHILD: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let pending = "";
  child.stdout.on("data", (d: Buffer) => {
    log.write(d);
    pending += d.toString();
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      try {
        const parsed = RunEventSchema.safeParse(JSON.parse(line));
        if (parsed.success) o.onEvent?.(parsed.data);
      } catch {
        // Not an event line: it stays in the log.
      }
    }
  });
  const stderr: string[] = [];
  child.stderr.on("data", (d: Buffer) => {
    log.write(d);
    // The dashboard's line carries a login code and says nothing about why a run failed.
    stderr.push(...d.toString().split("\n").filter((l) => l.trim() !== "" && !l.includes("dashboard at http")));
    stderr.splice(0, Math.max(0, stderr.length - STDERR_TAIL));
  });
  let interrupted = false;
  const ended = new Promise<RunOutcome>((resolve) => {
    const finish = (outcome: RunOutcome): void => {
      log.end(() => resolve(outcome));
    };
    child.on("error", (err) => finish({ kind: "failed", exitCode: null, signal: null, error: err.message }));
    child.on("close", (code, signal) => {
      if (code === 0) finish({ kind: "done", exitCode: 0 });
      else if (code === 130 || (interrupted && signal !== null)) finish({ kind: "interrupted", exitCode: code });
      else finish({ kind: "failed", exitCode: code, signal, error: stderr.join("\n") || `exited with ${code ?? signal}` });
    });
  });
  return {
    pid: child.pid ?? -1,
    interrupt() {
      interrupted = true;
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
    },
    ended,
  };
}
