import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { allApiDocs } from "./apps.ts";
import { reportText } from "./evaluate.ts";
import { loadTask, type StandInTask, TaskNotFoundError } from "./task-files.ts";
import { World } from "./world.ts";

/**
 * TEST DOUBLE for AppWorld's environment server (`appworld serve environment`): the same HTTP surface
 * (endpoints, body fields and defaults, `{"output": ...}` replies, FastAPI-style 400/404/405/422/500
 * errors, one world per process) over the synthetic apps and tasks of a data folder shaped like AppWorld's.
 */

type Body = Record<string, unknown>;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(typeof detail === "string" ? detail : "validation error");
  }
}

interface Field {
  name: string;
  type: "string" | "boolean" | "integer" | "array";
  required: boolean;
  nullable?: boolean;
}

function missing(name: string, input: unknown) {
  return { type: "missing", loc: ["body", name], msg: "Field required", input };
}

/** FastAPI's body validation: a 422 with one entry per bad field. */
function validate(body: Body, fields: Field[]): void {
  const errors: unknown[] = [];
  for (const f of fields) {
    const v = body[f.name];
    if (v === undefined) {
      if (f.required) errors.push(missing(f.name, body));
      continue;
    }
    if (v === null && f.nullable) continue;
    const ok =
      f.type === "string" ? typeof v === "string" : f.type === "boolean" ? typeof v === "boolean" : f.type === "integer" ? Number.isInteger(v) : Array.isArray(v) && v.every((x) => typeof x === "string");
    if (!ok) errors.push({ type: `${f.type}_type`, loc: ["body", f.name], msg: `Input should be a valid ${f.type}`, input: v });
  }
  if (errors.length) throw new HttpError(422, errors);
}

const INIT_FIELDS: Field[] = [
  { name: "task_id", type: "string", required: true },
  { name: "experiment_name", type: "string", required: false },
  { name: "remote_docker", type: "boolean", required: false },
  { name: "max_interactions", type: "integer", required: false },
  { name: "max_api_calls_per_interaction", type: "integer", required: false },
  { name: "random_seed", type: "integer", required: false, nullable: true },
  { name: "timeout_seconds", type: "integer", required: false, nullable: true },
];

function taskToDict(task: StandInTask) {
  return { task_id: task.id, instruction: task.instruction, supervisor: { ...task.supervisor }, datetime: task.datetime };
}

export interface StandInServerOptions {
  /** The AppWorld data folder (holds `datasets/` and `tasks/`). */
  dataDir: string;
  port: number;
  host?: string;
}

/** Starts the stand-in server; resolves once it listens. */
export async function serveStandIn(opts: StandInServerOptions): Promise<Server> {
  let world: World | undefined;

  function activeWorld(taskId: string): World {
    if (!world) throw new HttpError(400, "AppWorld has not been initialized.");
    if (world.task.id !== taskId) throw new HttpError(400, `The active task world is ${world.task.id}. But you have requested to operate on ${taskId}`);
    return world;
  }

  const routes: Record<string, (body: Body) => unknown> = {
    "POST /initialize": (b) => {
      validate(b, INIT_FIELDS);
      const task = loadTask(opts.dataDir, b["task_id"] as string);
      world = new World(task, (b["max_interactions"] as number | undefined) ?? 1000);
      return { output: taskToDict(task) };
    },
    "POST /execute": (b) => {
      validate(b, [{ name: "task_id", type: "string", required: true }, { name: "code", type: "string", required: true }]);
      return { output: activeWorld(b["task_id"] as string).execute(b["code"] as string) };
    },
    "POST /batch_execute": (b) => {
      validate(b, [{ name: "task_id", type: "string", required: true }, { name: "codes", type: "array", required: true }]);
      const w = activeWorld(b["task_id"] as string);
      return { output: (b["codes"] as string[]).map((c) => w.execute(c)) };
    },
    "POST /task_completed": (b) => {
      validate(b, [{ name: "task_id", type: "string", required: true }]);
      return { output: activeWorld(b["task_id"] as string).taskCompleted() };
    },
    "POST /evaluate": (b) => {
      validate(b, [
        { name: "task_id", type: "string", required: true },
        { name: "suppress_errors", type: "boolean", required: false },
        { name: "report", type: "boolean", required: false },
        { name: "experiment_name", type: "string", required: false, nullable: true },
      ]);
      const tracker = activeWorld(b["task_id"] as string).evaluate();
      return { output: b["report"] === true ? reportText(tracker) : tracker };
    },
    "POST /close": (b) => {
      validate(b, [{ name: "task_id", type: "string", required: true }]);
      activeWorld(b["task_id"] as string);
      world = undefined;
      return { output: null };
    },
    "POST /close_all": () => {
      world = undefined;
      return { output: null };
    },
    "POST /save": (b) => {
      validate(b, [{ name: "task_id", type: "string", required: true }]);
      activeWorld(b["task_id"] as string);
      return { output: null };
    },
    "POST /save_logs": (b) => {
      validate(b, [{ name: "task_id", type: "string", required: true }]);
      activeWorld(b["task_id"] as string);
      return { output: null };
    },
    "GET /": () => ({ message: "Welcome to the AppWorld stand-in server (a test double)." }),
    "GET /api_docs": () => allApiDocs(),
  };

  function handle(method: string, path: string, raw: string): { status: number; body: unknown } {
    const taskMatch = /^\/tasks\/([^/]+)$/.exec(path);
    if (taskMatch && method === "GET") return { status: 200, body: { output: taskToDict(loadTask(opts.dataDir, decodeURIComponent(taskMatch[1]!))) } };
    const route = routes[`${method} ${path}`];
    if (!route) {
      const known = Object.keys(routes).some((k) => k.endsWith(` ${path}`)) || !!taskMatch;
      return known ? { status: 405, body: { detail: "Method Not Allowed" } } : { status: 404, body: { detail: "Not Found" } };
    }
    let body: Body = {};
    if (method === "POST" && raw.trim()) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        throw new HttpError(422, [{ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error", input: {} }]);
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new HttpError(422, [{ type: "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary", input: parsed }]);
      }
      body = parsed as Body;
    }
    return { status: 200, body: route(body) };
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://stand-in").pathname;
      try {
        const r = handle(req.method ?? "GET", path, Buffer.concat(chunks).toString("utf8"));
        res.writeHead(r.status, { "content-type": "application/json" }).end(JSON.stringify(r.body));
      } catch (err) {
        if (err instanceof HttpError) {
          res.writeHead(err.status, { "content-type": "application/json" }).end(JSON.stringify({ detail: err.detail }));
          return;
        }
        if (!(err instanceof TaskNotFoundError)) console.error(err);
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("Internal Server Error");
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "127.0.0.1", () => resolve());
  });
  return server;
}
