import { readFileSync } from "node:fs";
import ivm from "isolated-vm";

/**
 * The child process that hosts isolates (vm-host-process.ts starts it). A fatal error in one of its
 * isolates (V8 aborts on a heap OOM that isolated-vm's own check missed) takes this process down, never
 * the parent. Instances are multiplexed over the IPC channel by the id the parent gives at `start`.
 * Compiled to plain JS at run time (host-file.ts).
 */

/** Parent -> host. */
export type HostCommand =
  | { type: "start"; instance: number; bundlePath: string; memoryMb: number; startTimeoutMs: number }
  | { type: "call"; instance: number; id: number; json: string; timeoutMs: number }
  | { type: "dispose"; instance: number };

export type StartResult = { ok: true } | { ok: false; kind: "timeout" | "oom" | "start-failed"; message: string };

export type CallReply =
  | { id: number; ok: true; json: string }
  | { id: number; ok: false; kind: "timeout" | "oom" | "protocol" | "crash"; message: string };

/** Host -> parent. `ready` once it listens (a command sent before would be dropped). */
export type HostEvent =
  | { type: "ready" }
  | { type: "started"; instance: number; result: StartResult }
  | { type: "reply"; instance: number; reply: CallReply };

const CONSOLE = "globalThis.console = { log() {}, info() {}, warn() {}, error() {}, debug() {} };";

const scripts = new Map<string, { code: string; cache?: ivm.ExternalCopy<ArrayBuffer> }>();

function loadScript(bundlePath: string) {
  let s = scripts.get(bundlePath);
  if (!s) {
    s = { code: readFileSync(bundlePath, "utf8") };
    scripts.set(bundlePath, s);
  }
  return s;
}

interface Blank {
  isolate: ivm.Isolate;
  context: ivm.Context;
}

/**
 * One blank isolate + context per memory limit, made ahead while the host is idle: creating an
 * isolate is most of a cold start, and a blank one holds no plugin code or state.
 */
const spares = new Map<number, Blank>();

function createBlank(memoryMb: number): Blank {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  const context = isolate.createContextSync();
  context.global.setSync("globalThis", context.global.derefInto());
  context.evalSync(CONSOLE);
  return { isolate, context };
}

function takeBlank(memoryMb: number): Blank {
  const spare = spares.get(memoryMb);
  spares.delete(memoryMb);
  setImmediate(() => {
    try {
      if (!spares.has(memoryMb)) spares.set(memoryMb, createBlank(memoryMb));
    } catch {
      // No spare this time: the next start makes its own, and reports why if it cannot.
    }
  });
  return spare && !spare.isolate.isDisposed ? spare : createBlank(memoryMb);
}

interface Served {
  call(id: number, json: string, timeoutMs: number): void;
  dispose(): void;
}

const served = new Map<number, Served>();

function start(cmd: Extract<HostCommand, { type: "start" }>): StartResult {
  let blank: Blank;
  try {
    blank = takeBlank(Math.max(8, cmd.memoryMb));
  } catch (err) {
    return { ok: false, kind: "start-failed", message: `cannot create an isolate: ${messageOf(err)}` };
  }
  const { isolate, context } = blank;
  try {
    const s = loadScript(cmd.bundlePath);
    const script: ivm.Script & ivm.CachedDataResult = s.cache
      ? isolate.compileScriptSync(s.code, { cachedData: s.cache, filename: "plugin.js" })
      : isolate.compileScriptSync(s.code, { produceCachedData: true, filename: "plugin.js" });
    if (!s.cache && script.cachedData) s.cache = script.cachedData;
    script.runSync(context, { timeout: cmd.startTimeoutMs });
    script.release();
    const call = context.global.getSync("__agentjet_call", { reference: true }) as ivm.Reference<
      (json: string) => Promise<string>
    >;
    if (call.typeof !== "function") throw new Error("the bundle did not install __agentjet_call");
    served.set(cmd.instance, serve(cmd.instance, isolate, call));
    return { ok: true };
  } catch (err) {
    const kind = classify(isolate, err, false);
    if (!isolate.isDisposed) isolate.dispose();
    return { ok: false, kind: kind === "protocol" ? "start-failed" : kind, message: messageOf(err) };
  }
}

function serve(instance: number, isolate: ivm.Isolate, call: ivm.Reference<(json: string) => Promise<string>>): Served {
  let killedForTime = false;
  const dispose = () => {
    served.delete(instance);
    if (!isolate.isDisposed) isolate.dispose();
  };
  const reply = (r: CallReply) => send({ type: "reply", instance, reply: r });
  return {
    dispose,
    call(id, json, timeoutMs) {
      // The isolate's own timeout covers synchronous code; this timer also covers work after an await.
      const timer = setTimeout(() => {
        killedForTime = true;
        if (!isolate.isDisposed) isolate.dispose();
      }, timeoutMs);
      call
        .apply(undefined, [json], { timeout: timeoutMs, arguments: { copy: true }, result: { promise: true, copy: true } })
        .then(
          (result) => {
            clearTimeout(timer);
            if (typeof result !== "string") return reply({ id, ok: false, kind: "protocol", message: "reply is not a string" });
            reply({ id, ok: true, json: result });
          },
          (err: unknown) => {
            clearTimeout(timer);
            reply({ id, ok: false, kind: classify(isolate, err, killedForTime), message: messageOf(err) });
            dispose();
          },
        );
    },
  };
}

function classify(isolate: ivm.Isolate, err: unknown, killedForTime: boolean): "timeout" | "oom" | "protocol" {
  const message = messageOf(err);
  if (killedForTime || /timed out/i.test(message)) return "timeout";
  if (/memory limit|out of memory|heap/i.test(message)) return "oom";
  if (isolate.isDisposed && !killedForTime) return "oom";
  return "protocol";
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A closed channel means the parent is gone: so is every instance here. */
function send(event: HostEvent) {
  process.send?.(event, (err: Error | null) => {
    if (err) process.exit(0);
  });
}

process.on("message", (cmd: HostCommand) => {
  switch (cmd.type) {
    case "start":
      return send({ type: "started", instance: cmd.instance, result: start(cmd) });
    case "call": {
      const target = served.get(cmd.instance);
      if (target) return target.call(cmd.id, cmd.json, cmd.timeoutMs);
      const gone: CallReply = { id: cmd.id, ok: false, kind: "crash", message: "the instance is gone from its host" };
      return send({ type: "reply", instance: cmd.instance, reply: gone });
    }
    case "dispose":
      return served.get(cmd.instance)?.dispose();
  }
});
process.on("disconnect", () => process.exit(0));
// The parent owns this process: a Ctrl+C or a group SIGTERM is the parent's to handle (it may drain its
// episodes first); the host goes when the parent kills it or its channel closes.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => undefined);
send({ type: "ready" });
