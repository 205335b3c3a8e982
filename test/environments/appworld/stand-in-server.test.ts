import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStandIn } from "./helpers.ts";

describe("the AppWorld stand-in server (test double): AppWorld's HTTP surface", () => {
  let server: Server;
  let base: string;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    ({ server, baseUrl: base } = await startStandIn());
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("answers 400 before /initialize, 422 on a missing field, 404/405 on unknown routes", async () => {
    expect(await post("/execute", { task_id: "5f1c0de_1", code: "1" })).toEqual({ status: 400, body: { detail: "AppWorld has not been initialized." } });
    expect((await post("/task_completed", { task_id: "5f1c0de_1" })).status).toBe(400);
    const bad = await post("/initialize", {});
    expect(bad.status).toBe(422);
    expect(bad.body["detail"]).toMatchObject([{ type: "missing", loc: ["body", "task_id"] }]);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/execute`)).status).toBe(405);
    expect((await fetch(`${base}/initialize`, { method: "POST", body: JSON.stringify({ task_id: "missing_1" }) })).status).toBe(500);
  });

  it("runs a task: initialize, execute, task_completed, evaluate, close; replies are {output}", async () => {
    const init = await post("/initialize", { task_id: "5f1c0de_1", experiment_name: "t", remote_docker: false, max_interactions: 10, random_seed: 1, timeout_seconds: 100 });
    expect(init).toEqual({
      status: 200,
      body: { output: { task_id: "5f1c0de_1", instruction: expect.stringContaining("buy oat milk"), supervisor: { first_name: "Ada", last_name: "Quill", email: "ada.quill@example.com", phone_number: "5550100" }, datetime: "2023-05-18T12:00:00" } },
    });
    expect((await post("/execute", { task_id: "other_1", code: "1" })).body["detail"]).toMatch(/active task world is 5f1c0de_1/);
    expect((await post("/execute", { task_id: "5f1c0de_1", code: 'x = apis.todo.show_tasks(list="inbox")\nprint(x[0]["title"])' })).body).toEqual({ output: "call the plumber\n" });
    expect((await post("/execute", { task_id: "5f1c0de_1", code: "print(y)" })).body["output"]).toBe(
      'Execution failed. Traceback:\n  File "<python-input>", line 1, in <module>\n    print(y)\nNameError: name \'y\' is not defined',
    );
    expect((await post("/execute", { task_id: "5f1c0de_1", code: "for t in x:" })).body["output"]).toMatch(/^Execution failed. Traceback:\nSyntax error in line:\nfor t in x:\nMessage: /);
    expect((await post("/execute", { task_id: "5f1c0de_1", code: "apis.todo.mark_done(task_id=99)" })).body["output"]).toMatch(/Exception: Response status code is 404:\n\{"message":"The task does not exist."\}$/);
    expect((await post("/execute", { task_id: "5f1c0de_1", code: "" })).body["output"]).toBe("No code available to execute.");
    expect((await post("/execute", { task_id: "5f1c0de_1", code: "apis.todo.mark_done(task_id=1)" })).body["output"]).toBe("Execution successful.");
    expect((await post("/task_completed", { task_id: "5f1c0de_1" })).body).toEqual({ output: false });
    const partial = (await post("/evaluate", { task_id: "5f1c0de_1", suppress_errors: true, report: false })).body["output"] as Record<string, unknown>;
    expect(partial).toMatchObject({ success: false, difficulty: 1, num_tests: 4 });
    expect((partial["passes"] as unknown[]).length).toBe(2);
    expect(partial["failures"]).toMatchObject([{ requirement: expect.stringContaining("buy oat milk"), trace: expect.stringContaining("AssertionError"), label: "no_op_fail" }, { label: "no_op_fail" }]);
    await post("/execute", { task_id: "5f1c0de_1", code: 'apis.todo.add_task(title="buy oat milk")\napis.supervisor.complete_task()' });
    expect((await post("/task_completed", { task_id: "5f1c0de_1" })).body).toEqual({ output: true });
    expect((await post("/evaluate", { task_id: "5f1c0de_1" })).body["output"]).toMatchObject({ success: true, num_tests: 4, failures: [] });
    expect(typeof (await post("/evaluate", { task_id: "5f1c0de_1", report: true })).body["output"]).toBe("string");
    expect((await post("/close", { task_id: "5f1c0de_1" })).body).toEqual({ output: null });
    expect((await post("/execute", { task_id: "5f1c0de_1", code: "1" })).status).toBe(400);
  });

  it("caps interactions, serves GET /, /tasks/{id} and /api_docs", async () => {
    await post("/initialize", { task_id: "c3d4e5f_1", max_interactions: 1 });
    expect((await post("/execute", { task_id: "c3d4e5f_1", code: "print(apis.api_docs.show_app_descriptions())" })).body["output"]).toContain('"name": "music"');
    expect((await post("/execute", { task_id: "c3d4e5f_1", code: "1" })).body["output"]).toMatch(/Maximum number of executions \(1\) reached/);
    expect(((await (await fetch(`${base}/`)).json()) as { message: string }).message).toMatch(/stand-in/);
    expect(((await (await fetch(`${base}/tasks/7a2e9b4_1`)).json()) as { output: { task_id: string } }).output.task_id).toBe("7a2e9b4_1");
    expect(Object.keys((await (await fetch(`${base}/api_docs`)).json()) as object)).toEqual(["api_docs", "supervisor", "todo", "music"]);
    expect((await post("/close_all", {})).body).toEqual({ output: null });
  });
});
