import { describe, expect, it } from "vitest";
import type { EnvironmentRuntime } from "../../plugins/index.ts";
import type { Assignment } from "../../sdk/swarm/protocol.ts";
import { ChatCompletionError } from "../../sdk/swarm/errors.ts";
import { runEpisode } from "../../sdk/swarm/run-episode.ts";

/** The workflows below never open an instance: a runtime that only names itself. */
const runtime = { manifest: { name: "env", version: "0.1.0", reward: { min: 0, max: 1 } } } as unknown as EnvironmentRuntime;

const assignment: Assignment = {
  episodeId: "ep-1",
  env: { name: "env", version: "0.1.0" },
  task: { id: "t-1", split: "train", data: {} },
  seed: 1,
  agents: { solver: { baseUrl: "http://server/v1", apiKey: "sk-aj-1", model: "main", role: "solver" } },
  builtinAgents: [],
  maxTurns: 1,
  purpose: "train",
  attempt: 0,
};

const play = (fail: () => never, signal = new AbortController().signal) =>
  runEpisode({ assignment, runtime, signal, workflow: () => async () => fail(), agreeSync: () => {} });

describe("runEpisode: what a workflow's failure is reported as", () => {
  it("a throw is the workflow's failure", async () => {
    expect(await play(() => { throw new Error("a bug"); })).toMatchObject({ type: "abort", reason: { kind: "workflow", message: "a bug" } });
  });

  // Regression: the scheduler's cancel aborts the episode's signal, the workflow's fetch throws "This
  // operation was aborted", and the client logged it as a workflow failure.
  it("a failure after the scheduler cancelled the episode (its signal aborted) is cancelled, not the workflow's", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await play(() => { throw new Error("This operation was aborted"); }, controller.signal)).toMatchObject({ type: "abort", reason: { kind: "cancelled" } });
  });

  it("the server's 409 AJ_ERR_EPISODE_CLOSED, as an OpenAI SDK raises it, is cancelled", async () => {
    const closed = Object.assign(new Error("409 episode closed"), { status: 409, code: "AJ_ERR_EPISODE_CLOSED" });
    expect(await play(() => { throw closed; })).toMatchObject({ type: "abort", reason: { kind: "cancelled" } });
  });

  // Regression: every run that reached its last step logged its local clients' in-flight episodes as
  // workflow failures ('503 ... the engine is stopping').
  it("the server's 503 AJ_ERR_ENGINE_OFFLINE (the engine stopping) is cancelled", async () => {
    const stopping = new ChatCompletionError(503, '{"error":{"message":"the engine is stopping","type":"server_error","code":"AJ_ERR_ENGINE_OFFLINE","param":null}}');
    expect(await play(() => { throw stopping; })).toMatchObject({ type: "abort", reason: { kind: "cancelled" } });
  });
});
