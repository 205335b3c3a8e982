import { readFileSync } from "node:fs";
import type { MessagePort } from "node:worker_threads";
import ivm from "isolated-vm";

/**
 * The piscina worker that hosts isolates. A `start` task builds one instance (isolate + context with the
 * bundle loaded) and serves it over the MessagePort the host passed in; the task ends once it is ready,
 * so the worker stays free for more. Compiled to plain JS at run time (worker-file.ts).
 */

export interface StartTask {
  bundlePath: string;
  memoryMb: number;
  startTimeoutMs: number;
  port: MessagePort;
}

export type StartResult = { ok: true } | { ok: false; kind: "timeout" | "oom" | "start-failed"; message: string };

/** Host -> worker on an instance port. */
export type PortRequest = { id: number; json: string; timeoutMs: number } | { dispose: true };

/** Worker -> host on an instance port. */
export type PortReply =
  | { id: number; ok: true; json: string }
  | { id: number; ok: false; kind: "timeout" | "oom" | "protocol"; message: string };

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
 * One blank isolate + context per memory limit, made ahead while the worker is idle: creating an
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
    if (!spares.has(memoryMb)) spares.set(memoryMb, createBlank(memoryMb));
  });
  return spare && !spare.isolate.isDisposed ? spare : createBlank(memoryMb);
}

export default async function start(task: StartTask): Promise<StartResult> {
  const { isolate, context } = takeBlank(Math.max(8, task.memoryMb));
  try {
    const s = loadScript(task.bundlePath);
    const script: ivm.Script & ivm.CachedDataResult = s.cache
      ? isolate.compileScriptSync(s.code, { cachedData: s.cache, filename: "plugin.js" })
      : isolate.compileScriptSync(s.code, { produceCachedData: true, filename: "plugin.js" });
    if (!s.cache && script.cachedData) s.cache = script.cachedData;
    script.runSync(context, { timeout: task.startTimeoutMs });
    script.release();
    const call = context.global.getSync("__agentjet_call", { reference: true }) as ivm.Reference<
      (json: string) => Promise<string>
    >;
    if (call.typeof !== "function") throw new Error("the bundle did not install __agentjet_call");
    serve(task.port, isolate, call);
    return { ok: true };
  } catch (err) {
    const kind = classify(isolate, err, false);
    if (!isolate.isDisposed) isolate.dispose();
    task.port.close();
    return { ok: false, kind: kind === "protocol" ? "start-failed" : kind, message: messageOf(err) };
  }
}

function serve(port: MessagePort, isolate: ivm.Isolate, call: ivm.Reference<(json: string) => Promise<string>>) {
  let killedForTime = false;
  const dispose = () => {
    if (!isolate.isDisposed) isolate.dispose();
    port.close();
  };
  port.on("message", (msg: PortRequest) => {
    if ("dispose" in msg) return dispose();
    // The isolate's own timeout covers synchronous code; this timer also covers work after an await.
    const timer = setTimeout(() => {
      killedForTime = true;
      if (!isolate.isDisposed) isolate.dispose();
    }, msg.timeoutMs);
    call
      .apply(undefined, [msg.json], {
        timeout: msg.timeoutMs,
        arguments: { copy: true },
        result: { promise: true, copy: true },
      })
      .then(
        (json) => {
          clearTimeout(timer);
          if (typeof json !== "string") return send({ id: msg.id, ok: false, kind: "protocol", message: "reply is not a string" });
          send({ id: msg.id, ok: true, json });
        },
        (err: unknown) => {
          clearTimeout(timer);
          const kind = classify(isolate, err, killedForTime);
          send({ id: msg.id, ok: false, kind, message: messageOf(err) });
          dispose();
        },
      );
  });
  function send(reply: PortReply) {
    try {
      port.postMessage(reply);
    } catch {
      dispose();
    }
  }
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
