import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { createTokenizer } from "../../../server/tokenizers/create-tokenizer.ts";
import { buildTestServer, claimSolver, postChat, testConfig } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

// A 4 MB message goes through every part that keeps it off the event loop: the JSON body thread, the
// encode thread (its text in shared memory, its ids back the same way) and the segment cache's long-text
// keys. Its recorded tokens must be the direct tokenization's.
describe("a 4 MB message", () => {
  let app: FastifyInstance | undefined;
  afterAll(async () => {
    await app?.close();
  });

  it("records the same tokens as tokenizing it directly, and again from the cache", async () => {
    const words = ["lorem", "ipsum", "数学", "x1", "42", "\n", "  ", "é", "end.", "(a)", "😀"];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const parts: string[] = [];
    for (let n = 0; n < 4 << 20; ) {
      const w = words[Math.floor(rand() * words.length)]!;
      parts.push(w);
      n += w.length + 1;
    }
    const big = parts.join(" ");
    app = await buildTestServer(
      { main: scriptedEngine(["ok<|im_end|>"]) },
      { config: testConfig({ policies: { main: { tokenizer: "qwen3" } }, server: { bodyLimitBytes: 32 << 20 } }) },
    );
    const store = app.agentjet.store;
    const key = claimSolver(app, "e1", "t");
    const chat = (messages: unknown[]) => postChat(app!, key, { messages });
    const first = await chat([{ role: "user", content: big }]);
    expect(first.statusCode).toBe(200);
    const again = await chat([{ role: "system", content: "s" }, { role: "user", content: big }]);
    expect(again.statusCode).toBe(200);
    const direct = createTokenizer("qwen3").encode(`<|im_start|>user\n${big}<|im_end|>\n`);
    const [one, two] = store.tracker.callsOf("e1");
    expect(one!.segments[0]!.ids).toEqual(direct);
    expect(two!.segments[1]!.ids).toEqual(direct);
  }, 240_000);
});
