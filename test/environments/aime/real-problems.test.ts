import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { environment } from "../../../environments/aime/src/index.ts";
import { verifyAnswer } from "../../../environments/aime/src/verify.ts";
import { correctStyles, wrongStyles } from "./answer-styles.ts";

const DATA = new URL("../../../../shared/data/", import.meta.url);

interface Row {
  id: string;
  problem: string;
  answer: string;
}

function load(file: string): Row[] {
  return readFileSync(new URL(file, DATA), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Row);
}

const ROWS = [...load("aime-2024.jsonl"), ...load("aime-2025.jsonl")];

describe("aime on the 60 real problems", () => {
  it("has all 60", () => expect(ROWS).toHaveLength(60));

  it("scores every correct style 1 and every wrong style 0", () => {
    const misses: string[] = [];
    for (const row of ROWS) {
      for (const [style, response] of correctStyles(row.answer)) {
        if (verifyAnswer(row.answer, response).reward !== 1) misses.push(`${row.id} correct/${style}`);
      }
      for (const [style, response] of wrongStyles(row.answer)) {
        if (verifyAnswer(row.answer, response).reward !== 0) misses.push(`${row.id} wrong/${style}`);
      }
    }
    expect(misses).toEqual([]);
  });

  it("plays an episode: system prompt + problem, one step, reward from the verifier", async () => {
    for (const row of ROWS) {
      const task = { id: row.id, split: "test", data: { problem: row.problem, answer: row.answer } };
      const ep = environment.createEpisode();
      const first = await ep.reset({ task, seed: 1, builtinAgents: [] });
      expect(first.done).toBe(false);
      const messages = first.observations["solver"]!.messages;
      expect(messages.map((m) => m.role)).toEqual(["system", "user"]);
      expect(messages[1]!.content).toBe(row.problem);
      const action = environment.solve!({ task, agent: "solver", messages });
      const last = await ep.step({ actions: { solver: action } });
      expect(last).toMatchObject({ done: true, rewards: { solver: 1 }, observations: {} });
    }
  });

  it("answers a malformed or missing action with reward 0 and flags, never a throw", async () => {
    const row = ROWS[0]!;
    const task = { id: row.id, split: "test", data: { problem: row.problem, answer: row.answer } };
    for (const actions of [{ solver: "\u0000}{ \\boxed{" }, {}, { solver: "" }]) {
      const ep = environment.createEpisode();
      await ep.reset({ task, seed: 1, builtinAgents: [] });
      const t = await ep.step({ actions });
      expect(t.done).toBe(true);
      expect(t.rewards).toEqual({ solver: 0 });
      expect((t.info?.["flags"] as string[]).length).toBeGreaterThan(0);
    }
  });

  it("rejects a task without an answer with a coded error", () => {
    const ep = environment.createEpisode();
    expect(() => ep.reset({ task: { id: "bad", split: "test", data: { problem: "p" } }, seed: 1, builtinAgents: [] })).toThrow(
      expect.objectContaining({ code: "AJ_ERR_AIME_INVALID_TASK" }),
    );
  });
});
