import { AppWorldHttpError, AppWorldReplyError } from "./errors.ts";

/** What `/initialize` and `GET /tasks/{id}` answer. */
export interface AppWorldTaskInfo {
  task_id: string;
  instruction: string;
  supervisor: { first_name: string; last_name: string; email: string; phone_number: string };
  datetime: string;
}

/** What `/evaluate` answers without `report`: AppWorld's `TestTracker.to_dict(stats_only=False)`. */
export interface AppWorldEvaluation {
  success: boolean;
  difficulty: number | null;
  num_tests: number;
  passes: Array<{ requirement: string; label?: string | null }>;
  failures: Array<{ requirement: string; trace?: string; label?: string | null }>;
}

export interface InitializeParams {
  task_id: string;
  experiment_name: string;
  remote_docker: boolean;
  max_interactions: number;
  random_seed: number;
  timeout_seconds: number;
}

export interface AppWorldClient {
  /** `GET /`: true once the server answers (AppWorld's own health check). */
  ping(timeoutMs: number): Promise<boolean>;
  initialize(params: InitializeParams): Promise<AppWorldTaskInfo>;
  execute(taskId: string, code: string): Promise<string>;
  taskCompleted(taskId: string): Promise<boolean>;
  evaluate(taskId: string): Promise<AppWorldEvaluation>;
  close(taskId: string): Promise<void>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

function checkTaskInfo(v: unknown): AppWorldTaskInfo {
  const s = isObject(v) ? v["supervisor"] : undefined;
  if (!isObject(v) || typeof v["task_id"] !== "string" || typeof v["instruction"] !== "string" || !isObject(s)) {
    throw new AppWorldReplyError("/initialize did not answer {task_id, instruction, supervisor, datetime}");
  }
  return v as unknown as AppWorldTaskInfo;
}

function checkEvaluation(v: unknown): AppWorldEvaluation {
  if (!isObject(v) || typeof v["success"] !== "boolean" || typeof v["num_tests"] !== "number" || !Array.isArray(v["passes"]) || !Array.isArray(v["failures"])) {
    throw new AppWorldReplyError("/evaluate did not answer {success, num_tests, passes, failures}");
  }
  return v as unknown as AppWorldEvaluation;
}

/**
 * A client of AppWorld's environment server (`appworld serve environment`) at `baseUrl`. Every reply is
 * `{"output": ...}`; a non-200 status throws `AppWorldHttpError` with FastAPI's `detail`.
 */
export function createAppWorldClient(opts: { baseUrl: string; fetch?: typeof fetch; timeoutMs?: number }): AppWorldClient {
  const doFetch = opts.fetch ?? fetch;
  const base = opts.baseUrl.replace(/\/$/, "");
  const timeoutMs = opts.timeoutMs ?? 600_000;

  async function post(endpoint: string, body: Record<string, unknown>): Promise<unknown> {
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${base}${endpoint}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw new AppWorldReplyError(`AppWorld ${endpoint} could not be reached: ${(err as Error).message}`, err);
    }
    if (res.status !== 200) {
      let detail = text;
      try {
        const parsed = JSON.parse(text) as { detail?: unknown };
        detail = typeof parsed.detail === "string" ? parsed.detail : JSON.stringify(parsed.detail ?? parsed);
      } catch {
        // Not JSON (a 500 is plain text): keep the text.
      }
      throw new AppWorldHttpError(endpoint, res.status, detail.slice(0, 2_000));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new AppWorldReplyError(`AppWorld ${endpoint} answered something that is not JSON`, err);
    }
    if (!isObject(parsed) || !("output" in parsed)) throw new AppWorldReplyError(`AppWorld ${endpoint} answered without "output"`);
    return parsed["output"];
  }

  return {
    async ping(pingTimeoutMs) {
      try {
        const res = await doFetch(`${base}/`, { signal: AbortSignal.timeout(pingTimeoutMs) });
        await res.text();
        return res.status === 200;
      } catch {
        return false;
      }
    },
    async initialize(params) {
      return checkTaskInfo(await post("/initialize", { ...params }));
    },
    async execute(taskId, code) {
      const out = await post("/execute", { task_id: taskId, code });
      if (typeof out !== "string") throw new AppWorldReplyError("/execute did not answer a string");
      return out;
    },
    async taskCompleted(taskId) {
      const out = await post("/task_completed", { task_id: taskId });
      if (typeof out !== "boolean") throw new AppWorldReplyError("/task_completed did not answer a boolean");
      return out;
    },
    async evaluate(taskId) {
      return checkEvaluation(await post("/evaluate", { task_id: taskId, suppress_errors: true, report: false }));
    },
    async close(taskId) {
      await post("/close", { task_id: taskId });
    },
  };
}
