import { type ChildProcess, fork } from "node:child_process";
import { failed, ok } from "../outcome.ts";
import type { Failure, Outcome } from "../runtime.ts";
import type { CallReply, HostCommand, HostEvent, StartResult } from "./vm-host.ts";

/** How long past a start's own limit the parent waits before it takes the host for hung and kills it. */
const START_GRACE_MS = 5_000;

/** How much of a host's stderr (the tail) is kept to explain its death. */
const STDERR_TAIL = 8192;

/** What V8 prints when it aborts on a heap OOM (isolated-vm calls abort() without an onCatastrophicError handler). */
const HEAP_OOM = /heap out of memory|is_heap_oom|CALL_AND_RETRY_LAST/;

/** An instance as its host sees it: replies to its calls, and the news that the host died. */
export interface HostedInstance {
  receive(reply: CallReply): void;
  lost(failure: Failure): void;
}

export interface StartOptions {
  bundlePath: string;
  memoryMb: number;
  startTimeoutMs: number;
}

/**
 * One child process hosting isolates (vm-host.ts), seen from the parent: it multiplexes instances over the
 * IPC channel by id, and when the process dies every instance it hosted fails, as `oom` when V8 ran out
 * of heap and `crash` otherwise. The process never keeps the parent alive: a start in flight holds it
 * with its deadline timer, a call with the driver's.
 */
export class VmHostProcess {
  readonly #child: ChildProcess;
  readonly #onDeath: (host: VmHostProcess) => void;
  readonly #closed: Promise<void>;
  #ready = false;
  #queue: HostCommand[] = [];
  #nextInstance = 1;
  #starts = new Map<number, (result: StartResult) => void>();
  #instances = new Map<number, HostedInstance>();
  #stderr = "";
  #killedBecause: string | undefined;
  #dead = false;

  constructor(file: string, onDeath: (host: VmHostProcess) => void) {
    this.#onDeath = onDeath;
    this.#child = fork(file, [], {
      // isolated-vm asks for --no-node-snapshot on Node >= 20; nothing else of the parent's flags (tsx) is needed.
      execArgv: ["--no-node-snapshot"],
      serialization: "json",
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    this.#closed = new Promise((resolve) => {
      this.#child.once("close", (code, signal) => {
        this.#die(code, signal);
        resolve();
      });
    });
    this.#child.on("error", (err) => {
      // Spawning failed: no process, so no `close` either.
      if (this.#child.pid === undefined) {
        this.#stderr = err.message;
        this.#die(null, null);
      }
    });
    this.#child.stderr?.setEncoding("utf8");
    this.#child.stderr?.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
    });
    this.#child.on("message", (event: HostEvent) => this.#receive(event));
    this.#child.unref();
    this.#child.channel?.unref();
    (this.#child.stderr as { unref?: () => void } | null)?.unref?.();
  }

  /** Instances hosted or starting here. */
  get load(): number {
    return this.#instances.size + this.#starts.size;
  }

  /** Starts an instance here; `create` makes the parent's side once the isolate is ready. */
  async start<T extends HostedInstance>(options: StartOptions, create: (id: number) => T): Promise<Outcome<T>> {
    if (this.#dead) return failed("start-failed", "the vm host process is gone");
    const id = this.#nextInstance++;
    const deadlineMs = options.startTimeoutMs + START_GRACE_MS;
    const deadline = setTimeout(() => void this.kill(`did not answer a start within ${deadlineMs} ms and was killed`), deadlineMs);
    const result = await new Promise<StartResult>((resolve) => {
      this.#starts.set(id, resolve);
      this.#send({ type: "start", instance: id, ...options });
    });
    clearTimeout(deadline);
    this.#starts.delete(id);
    if (!result.ok) return failed("start-failed", `${result.kind}: ${result.message}`);
    const instance = create(id);
    this.#instances.set(id, instance);
    return ok(instance);
  }

  call(instance: number, id: number, json: string, timeoutMs: number): void {
    this.#send({ type: "call", instance, id, json, timeoutMs });
  }

  dispose(instance: number): void {
    if (this.#instances.delete(instance)) this.#send({ type: "dispose", instance });
  }

  /** Kills the process (its instances are disposed or lost) and resolves once it is gone. */
  kill(because = "was closed"): Promise<void> {
    if (!this.#dead && !this.#killedBecause) {
      this.#killedBecause = because;
      // Hold the parent until the process is reaped, so that whoever awaits this gets to go on.
      this.#child.ref();
      (this.#child.stderr as { ref?: () => void } | null)?.ref?.();
      this.#child.kill("SIGKILL");
    }
    return this.#closed;
  }

  #send(command: HostCommand) {
    if (this.#dead) return;
    if (!this.#ready) {
      this.#queue.push(command);
      return;
    }
    // A send that fails means the process is going: its `close` fails what was in flight.
    this.#child.send(command, () => undefined);
  }

  #receive(event: HostEvent) {
    switch (event.type) {
      case "ready":
        this.#ready = true;
        for (const command of this.#queue.splice(0)) this.#send(command);
        return;
      case "started":
        return this.#starts.get(event.instance)?.(event.result);
      case "reply":
        return this.#instances.get(event.instance)?.receive(event.reply);
    }
  }

  #die(code: number | null, signal: NodeJS.Signals | null) {
    if (this.#dead) return;
    this.#dead = true;
    this.#onDeath(this);
    const failure = this.#explain(code, signal);
    for (const settle of this.#starts.values()) settle({ ok: false, kind: failure.kind === "oom" ? "oom" : "start-failed", message: failure.message });
    this.#starts.clear();
    const lost = [...this.#instances.values()];
    this.#instances.clear();
    for (const instance of lost) instance.lost(failure);
  }

  #explain(code: number | null, signal: NodeJS.Signals | null): Failure {
    const n = this.load;
    const gone = `its ${n} instance${n === 1 ? " is" : "s are"} gone`;
    const how = signal ?? `exit code ${code}`;
    if (this.#killedBecause) return { kind: "crash", message: `the vm host process ${this.#killedBecause}; ${gone}` };
    if (signal === "SIGABRT" || HEAP_OOM.test(this.#stderr)) {
      return { kind: "oom", message: `the vm host process died: V8 heap out of memory (${how}); ${gone}` };
    }
    const said = lastLine(this.#stderr);
    return { kind: "crash", message: `the vm host process died (${how})${said ? `: ${said}` : ""}; ${gone}` };
  }
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1)?.trim() ?? "";
}
