import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SpawnError } from "./errors.ts";

export type ProcessKind = "run" | "sweep";

/** A training run or sweep started as a child (`node bin/agentjet.js train|sweep ... --json`), as `process.json` records it. */
export interface ProcessRecord {
  id: string;
  kind: ProcessKind;
  /** The run directory, or the sweep's campaign directory (absolute). */
  dir: string;
  pid: number;
  args: string[];
  startedAt: string;
  /** Its exit, once a server that watched it saw it end. */
  exit?: { code: number | null; signal: string | null; at: string };
}

export interface ProcessTableOptions {
  /** The project the children run in (their working directory); the records live in `<projectDir>/.agentjet/mcp/<id>/`. */
  projectDir: string;
  /** The CLI the children run (default: this checkout's bin/agentjet.js). */
  bin?: string;
}

const BIN = join(import.meta.dirname, "..", "..", "bin", "agentjet.js");
const ID = /^(run|sweep)-[0-9a-f]{8}$/;

/**
 * The children this server started. They are detached: a run outlives the server (a coding agent
 * restarts its MCP servers freely), so each keeps a record, its stdout and its stderr in the project's
 * `.agentjet/mcp/<id>/`, and a later server finds it by id or directory.
 */
export class ProcessTable {
  readonly projectDir: string;
  private readonly bin: string;
  private readonly records = new Map<string, ProcessRecord>();
  private readonly children = new Map<string, ChildProcess>();
  private readonly exited = new Map<string, Promise<void>>();

  constructor(o: ProcessTableOptions) {
    this.projectDir = resolve(o.projectDir);
    this.bin = o.bin ?? BIN;
  }

  newId(kind: ProcessKind): string {
    return `${kind}-${randomBytes(4).toString("hex")}`;
  }

  /** `.agentjet/mcp/<id>/`, made on demand: process.json, stdout.log, stderr.log (and an inline config). */
  folderOf(id: string): string {
    const dir = join(this.projectDir, ".agentjet", "mcp", id);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  logsOf(id: string): { stdout: string; stderr: string } {
    const dir = join(this.projectDir, ".agentjet", "mcp", id);
    return { stdout: join(dir, "stdout.log"), stderr: join(dir, "stderr.log") };
  }

  /** Starts `node <bin> ...args` detached in the project, its output into the record's folder. */
  start(id: string, kind: ProcessKind, dir: string, args: string[]): ProcessRecord {
    const folder = this.folderOf(id);
    const logs = this.logsOf(id);
    const out = openSync(logs.stdout, "a");
    const err = openSync(logs.stderr, "a");
    let child: ChildProcess;
    try {
      // AGENTJET_CHILD blanked: the server itself runs as bin/agentjet.js's re-executed child.
      child = spawn(process.execPath, [this.bin, ...args], { cwd: this.projectDir, detached: true, stdio: ["ignore", out, err], env: { ...process.env, AGENTJET_CHILD: "" } });
    } catch (e) {
      throw new SpawnError(`agentjet ${args[0] ?? ""}`, e);
    } finally {
      closeSync(out);
      closeSync(err);
    }
    if (child.pid === undefined) throw new SpawnError(`agentjet ${args[0] ?? ""}`, "no pid");
    const record: ProcessRecord = { id, kind, dir: resolve(dir), pid: child.pid, args, startedAt: new Date().toISOString() };
    this.records.set(id, record);
    this.children.set(id, child);
    this.exited.set(
      id,
      new Promise((done) =>
        child.on("exit", (code, signal) => {
          record.exit = { code, signal, at: new Date().toISOString() };
          this.children.delete(id);
          this.save(record);
          done();
        }),
      ),
    );
    child.unref();
    writeFileSync(join(folder, "process.json"), `${JSON.stringify(record, null, 2)}\n`);
    return record;
  }

  private save(record: ProcessRecord): void {
    writeFileSync(join(this.folderOf(record.id), "process.json"), `${JSON.stringify(record, null, 2)}\n`);
  }

  /** The newest record of this kind whose id or directory is `ref`; null when there is none. */
  find(kind: ProcessKind, ref: string): ProcessRecord | null {
    if (ID.test(ref)) {
      const known = this.records.get(ref) ?? this.load(ref);
      return known?.kind === kind ? known : null;
    }
    const dir = resolve(this.projectDir, ref);
    const matches = [...this.records.values(), ...this.loadAll()].filter((r) => r.kind === kind && r.dir === dir);
    return matches.sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0] ?? null;
  }

  /** A running child of this kind in `dir`, if any. */
  activeIn(kind: ProcessKind, dir: string): ProcessRecord | null {
    const r = this.find(kind, resolve(this.projectDir, dir));
    return r && this.isAlive(r) ? r : null;
  }

  isAlive(r: ProcessRecord): boolean {
    if (this.records.get(r.id) === r && this.children.has(r.id)) return true;
    if (r.exit) return false;
    try {
      process.kill(r.pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EPERM";
    }
  }

  /** Signals the child itself, not its group: bin/agentjet.js forwards one SIGINT (a second means "exit at once"). */
  signal(r: ProcessRecord, signal: NodeJS.Signals): void {
    process.kill(r.pid, signal);
  }

  /** Resolves true once it has exited, false after `ms`. */
  async waitExit(r: ProcessRecord, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    const watched = this.exited.get(r.id);
    if (watched && this.records.get(r.id) === r) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((done) => (timer = setTimeout(() => done(false), ms)));
      const ended = await Promise.race([watched.then(() => true as const), timeout]);
      clearTimeout(timer);
      return ended;
    }
    while (this.isAlive(r)) {
      if (Date.now() >= deadline) return false;
      await new Promise((done) => setTimeout(done, 250));
    }
    return true;
  }

  private load(id: string): ProcessRecord | null {
    const file = join(this.projectDir, ".agentjet", "mcp", id, "process.json");
    if (!existsSync(file)) return null;
    try {
      return JSON.parse(readFileSync(file, "utf8")) as ProcessRecord;
    } catch {
      return null;
    }
  }

  private loadAll(): ProcessRecord[] {
    const root = join(this.projectDir, ".agentjet", "mcp");
    if (!existsSync(root)) return [];
    return readdirSync(root)
      .filter((id) => ID.test(id) && !this.records.has(id))
      .flatMap((id) => this.load(id) ?? []);
  }
}
