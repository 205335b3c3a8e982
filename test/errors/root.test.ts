import { describe, expect, it } from "vitest";
import { AgentJetError } from "../../errors/index.ts";
import { McpToolError, NotRunningError } from "../../hub/mcp/errors.ts";
import { EnvironmentNotFoundError, RegistryError } from "../../hub/registry/errors.ts";
import { NoTasksError, SchedulerError } from "../../hub/scheduler/errors.ts";
import { BuildFailedError, IntegrityError, SourceNotFoundError, StoreError } from "../../hub/store/errors.ts";
import { WorkflowExportError } from "../../hub/swarm/errors.ts";
import { NoCampaignError, SweepError } from "../../hub/sweep/errors.ts";
import { NoProgressError, TrainError } from "../../hub/train/errors.ts";
import { PluginError, UnknownSplitError } from "../../plugins/errors.ts";
import { RewardModelError } from "../../sdk/rewards/errors.ts";
import { ChatCompletionError, SwarmClientError } from "../../sdk/swarm/errors.ts";
import { NoReplicaError } from "../../server/engines/openai-tokens/errors.ts";
import { TrainerUnavailableError } from "../../server/engines/trainer/errors.ts";
import { AgentJetServerError } from "../../server/errors.ts";
import { HttpError } from "../../server/openai/errors.ts";

describe("AgentJetError, the one root", () => {
  it("is the base of every folder's errors, and each reports its own class name", () => {
    const cause = new Error("why");
    const cases: Array<[AgentJetError, abstract new (...args: never[]) => AgentJetError, string, string]> = [
      [new UnknownSplitError("test", ["train"]), PluginError, "UnknownSplitError", "AJ_ERR_PLUGIN_UNKNOWN_SPLIT"],
      [new IntegrityError("differs", "a", "b"), StoreError, "IntegrityError", "AJ_ERR_STORE_INTEGRITY"],
      [new BuildFailedError("tsc failed", cause), StoreError, "BuildFailedError", "AJ_ERR_STORE_BUILD"],
      [new EnvironmentNotFoundError("none"), RegistryError, "EnvironmentNotFoundError", "AJ_ERR_ENV_NOT_FOUND"],
      [new NoTasksError("env", "train"), SchedulerError, "NoTasksError", "AJ_ERR_SCHEDULER_NO_TASKS"],
      [new NoCampaignError("dir", "gone"), SweepError, "NoCampaignError", "AJ_ERR_SWEEP_NO_CAMPAIGN"],
      [new NoProgressError("3 batches in a row finished without a training step"), TrainError, "NoProgressError", "AJ_ERR_TRAIN_NO_PROGRESS"],
      [new NotRunningError("r1", "done"), McpToolError, "NotRunningError", "AJ_ERR_MCP_NOT_RUNNING"],
      [new ChatCompletionError(500, "boom"), SwarmClientError, "ChatCompletionError", "AJ_ERR_CLIENT_CHAT"],
      [new RewardModelError("AJ_ERR_JUDGE_FAILED", "no verdict", { cause }), AgentJetError, "RewardModelError", "AJ_ERR_JUDGE_FAILED"],
      [new NoReplicaError("none serve", cause), AgentJetServerError, "NoReplicaError", "AJ_ERR_NO_REPLICA"],
      [new TrainerUnavailableError("down", cause), AgentJetServerError, "TrainerUnavailableError", "AJ_ERR_TRAINER_UNAVAILABLE"],
      [new WorkflowExportError("wf.ts"), AgentJetError, "WorkflowExportError", "AJ_ERR_CLIENT_WORKFLOW"],
    ];
    for (const [err, base, name, code] of cases) {
      expect(err).toBeInstanceOf(base);
      expect(err).toBeInstanceOf(AgentJetError);
      expect(err.name).toBe(name);
      expect(err.code).toBe(code);
    }
    expect(new NoReplicaError("none serve", cause).cause).toBe(cause);
  });

  it("gives a class made with withCode its code, its message and the cause only when there is one", () => {
    const cause = new Error("why");
    const err = new BuildFailedError("tsc failed", cause);
    expect([err.name, err.code, err.message, err.cause]).toEqual(["BuildFailedError", "AJ_ERR_STORE_BUILD", "tsc failed", cause]);
    const bare = new SourceNotFoundError("no such folder");
    expect([bare.name, bare.code, bare.message, "cause" in bare]).toEqual(["SourceNotFoundError", "AJ_ERR_STORE_SOURCE_NOT_FOUND", "no such folder", false]);
  });

  it("carries the HTTP status an HttpError answers with", () => {
    expect(new HttpError(409, "AJ_ERR_EPISODE_CLOSED", "ended").httpStatus).toBe(409);
  });
});
