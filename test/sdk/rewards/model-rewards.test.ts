import { describe, expect, it } from "vitest";
import { RewardModelsSchema } from "../../../sdk/rewards/spec.ts";
import type { ClientEnvironment } from "../../../sdk/swarm/client-environment.ts";
import { ModelRewards } from "../../../sdk/swarm/model-rewards.ts";
import type { Assignment } from "../../../sdk/swarm/protocol.ts";

/** An environment whose manifest scores with an episode judge (never reached in these tests). */
const env = {
  runtime: {
    manifest: {
      name: "judged",
      reward: { min: 0, max: 1 },
      rewardModels: RewardModelsSchema.parse({
        parts: [{ name: "judge", kind: "judge", model: "judge-7b", baseUrl: "http://127.0.0.1:9/v1", rubric: "Grade {{transcript}}" }],
      }),
    },
  },
  hash: "h",
  dir: "/nonexistent",
} as unknown as ClientEnvironment;

const assignment: Assignment = {
  episodeId: "ep-1",
  env: { name: "judged", version: "0.1.0" },
  task: { id: "t-1", split: "train", data: { question: "q" } },
  seed: 1,
  agents: { speaker: { baseUrl: "http://server/v1", apiKey: "sk-aj-1", model: "main", role: "speaker" } },
  builtinAgents: [],
  maxTurns: 1,
  purpose: "train",
  attempt: 0,
};

const ended = { type: "end" as const, episodeId: "ep-1", rewards: { speaker: 0 } };

const answering = (status: number, body: unknown): typeof fetch => (async () => new Response(JSON.stringify(body), { status })) as typeof fetch;

describe("ModelRewards: reading an ended episode back from the server", () => {
  it("an episode the server already closed (409 AJ_ERR_EPISODE_CLOSED: its group failed, the run stopped) aborts as cancelled, not as a reward-model failure", async () => {
    const rewards = new ModelRewards(
      answering(409, { error: { message: "episode 'ep-1' is aborted", type: "conflict_error", code: "AJ_ERR_EPISODE_CLOSED", param: null } }),
    );
    try {
      const out = await rewards.apply(assignment, env, ended);
      expect(out).toMatchObject({ type: "abort", episodeId: "ep-1", reason: { kind: "cancelled" } });
      expect(out.type === "abort" && out.reason.message).toContain("closed");
    } finally {
      await rewards.close();
    }
  });

  it("any other failure to read the transcript is a reward-model failure (retried, never reward 0)", async () => {
    const rewards = new ModelRewards(answering(500, { error: { message: "boom" } }));
    try {
      const out = await rewards.apply(assignment, env, ended);
      expect(out).toMatchObject({ type: "abort", reason: { kind: "reward-model" } });
      expect(out.type === "abort" && out.reason.message).toContain("HTTP 500");
    } finally {
      await rewards.close();
    }
  });

  it("an episode cancelled while its judge waits out a 503 stops waiting and aborts as cancelled", async () => {
    const controller = new AbortController();
    let judged = 0;
    const fetchImpl = (async (url: string | URL | Request) => {
      if (String(url).endsWith("/transcript")) {
        return Response.json({ episodeId: "ep-1", agents: { speaker: { messages: [{ role: "assistant", content: "hi" }] } } });
      }
      judged += 1;
      setImmediate(() => controller.abort());
      return new Response("overloaded", { status: 503, headers: { "retry-after": "30" } });
    }) as typeof fetch;
    const rewards = new ModelRewards(fetchImpl);
    try {
      const started = performance.now();
      const out = await rewards.apply(assignment, env, ended, controller.signal);
      expect(out).toMatchObject({ type: "abort", episodeId: "ep-1", reason: { kind: "cancelled" } });
      expect(judged).toBe(1);
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await rewards.close();
    }
  });
});
