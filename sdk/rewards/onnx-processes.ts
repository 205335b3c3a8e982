import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** One batch for the ONNX process (`onnx-worker.mjs`): one model, its vocabulary, the texts it scores. */
export interface OnnxTask {
  modelPath: string;
  vocabPath: string;
  kind: "bag-of-words" | "characters";
  texts: string[];
}

/** The process's answer: the scores as the model gave them (a Float32Array), or what failed. */
type Answer = { id: number; scores: ArrayLike<number> } | { id: number; error: string };

interface InFlight {
  resolve: (scores: ArrayLike<number>) => void;
  reject: (err: Error) => void;
}

interface Child {
  process: ChildProcess;
  inFlight: Map<number, InFlight>;
}

/** How long `close` waits for a process to exit after it is disconnected, before it is killed. */
const EXIT_GRACE_MS = 5_000;

const WORKER = fileURLToPath(new URL("./onnx-worker.mjs", import.meta.url));

/**
 * Up to `size` processes that run ONNX batches, started as they are needed and kept (each keeps its
 * loaded sessions). A batch goes to the least busy process. A process that dies (a native crash in
 * onnxruntime) fails only the batches it held, with the way it ended; the next batch starts another.
 * Idle, the processes keep nothing alive.
 */
export class OnnxProcesses {
  readonly #children: Child[] = [];
  #nextId = 0;
  #closed = false;

  constructor(readonly size: number) {}

  /** Scores a batch on one of the processes; rejects with what went wrong there. */
  run(task: OnnxTask): Promise<ArrayLike<number>> {
    if (this.#closed) return Promise.reject(new Error("the ONNX scorer is closed"));
    const child = this.#pick();
    const id = this.#nextId++;
    return new Promise<ArrayLike<number>>((resolve, reject) => {
      child.inFlight.set(id, { resolve, reject });
      ref(child);
      child.process.send({ id, ...task }, (err) => {
        if (err) this.#settle(child, id, new Error(`sending a batch to the ONNX process: ${err.message}`));
      });
    });
  }

  /** Disconnects every process and waits for each to exit (killing one that does not in time); batches still running fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const children = this.#children.splice(0);
    await Promise.all(children.map((c) => stop(c)));
  }

  /** The least busy process, or a new one while there are fewer than `size` and each has work. */
  #pick(): Child {
    let best: Child | undefined;
    for (const c of this.#children) if (best === undefined || c.inFlight.size < best.inFlight.size) best = c;
    if (best !== undefined && (best.inFlight.size === 0 || this.#children.length >= this.size)) return best;
    return this.#start();
  }

  #start(): Child {
    // a plain .mjs: no TypeScript loader, no inherited flags (a test runner's or tsx's)
    const proc = fork(WORKER, [], { execArgv: [], serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const child: Child = { process: proc, inFlight: new Map() };
    this.#children.push(child);
    proc.on("message", (m: Answer) => {
      if ("scores" in m) this.#settle(child, m.id, null, m.scores);
      else this.#settle(child, m.id, new Error(m.error));
    });
    const gone = (why: string): void => {
      const at = this.#children.indexOf(child);
      if (at >= 0) this.#children.splice(at, 1);
      for (const id of [...child.inFlight.keys()]) this.#settle(child, id, new Error(`the ONNX process ${why}`));
    };
    proc.on("error", (err) => gone(`failed: ${err.message}`));
    proc.on("exit", (code, signal) => gone(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    return child;
  }

  #settle(child: Child, id: number, err: Error | null, scores?: ArrayLike<number>): void {
    const f = child.inFlight.get(id);
    if (f === undefined) return;
    child.inFlight.delete(id);
    if (child.inFlight.size === 0) unref(child);
    if (err) f.reject(err);
    else f.resolve(scores!);
  }
}

/** A process with batches in flight (and its channel) keeps its parent alive until they are answered. */
function ref(child: Child): void {
  child.process.ref();
  child.process.channel?.ref();
}

/** An idle process (and its channel) keeps its parent's event loop from nothing. */
function unref(child: Child): void {
  child.process.unref();
  child.process.channel?.unref();
}

function stop(child: Child): Promise<void> {
  const proc = child.process;
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => proc.kill("SIGKILL"), EXIT_GRACE_MS);
    proc.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    if (proc.connected) proc.disconnect();
    else proc.kill("SIGTERM");
  });
}
