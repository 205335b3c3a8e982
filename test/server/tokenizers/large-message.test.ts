import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { createTokenizer } from "../../../server/tokenizers/create-tokenizer.ts";
import { ADMIN_AUTH, buildTestServer, claimSolver, postChat, testConfig } from "../helpers/build-test-server.ts";
import { scriptedEngine } from "../helpers/scripted-engine.ts";

// A 4 MB message goes through every part that keeps it off the event loop: the JSON body thread, the
// encode thread (its text in shared memory, its ids back the same way, kept there) and the segment cache's
// long-text keys. Its recorded tokens must be the direct tokenization's.
describe("a 4 MB message", () => {
  let app: FastifyInstance | undefined;
  const dir = mkdtempSync(join(tmpdir(), "aj-large-message-"));
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
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
      { config: testConfig({ policies: { main: { tokenizer: "qwen3" } }, server: { bodyLimitBytes: 32 << 20 } }), dbPath: join(dir, "run.db") },
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
    // the ids stay in the encode thread's shared memory (never copied into an array on the event loop)
    expect(one!.segments[0]!.ids).toBeInstanceOf(Int32Array);
    expect(Array.from(one!.segments[0]!.ids)).toEqual(direct);
    // the next call's segment is the cached one, and its small new message a plain array
    expect(two!.segments[1]!.ids).toBe(one!.segments[0]!.ids);
    expect(Array.isArray(two!.segments[0]!.ids)).toBe(true);
    // the calls as the admin route sends them: ids as JSON arrays
    const listed = await app.inject({ method: "GET", url: "/v1/episodes/e1/calls", headers: ADMIN_AUTH });
    expect((listed.json() as { calls: Array<{ segments: Array<{ ids: unknown }> }> }).calls[0]!.segments[0]!.ids).toEqual(direct);
    await app.close();
    app = undefined;
    const db = new Database(join(dir, "run.db"), { readonly: true });
    const rows = db.prepare("SELECT segments FROM calls WHERE episode_id = 'e1' ORDER BY seq").all() as Array<{ segments: string }>;
    db.close();
    const recorded = rows.map((r) => JSON.parse(r.segments) as Array<{ role: string; text: string; ids: number[] }>);
    expect(recorded.map((segs) => segs.map((s) => s.role))).toEqual([["user"], ["system", "user"]]);
    expect(recorded[0]![0]!.ids).toEqual(direct);
    expect(recorded[1]![1]!.ids).toEqual(direct);
  }, 240_000);
});

describe("messages tokenized on the encode thread, in prompts that fit", () => {
  it("reach the engine as the direct tokenization's ids, joined in one go or a slice at a time", async () => {
    const engine = scriptedEngine(["ok<|im_end|>", "ok<|im_end|>"], { maxContext: 1 << 20 });
    const app = await buildTestServer({ main: engine }, { config: testConfig({ policies: { main: { tokenizer: "qwen3" } }, server: { bodyLimitBytes: 32 << 20 } }) });
    try {
      const key = claimSolver(app, "e1", "t");
      const tok = createTokenizer("qwen3");
      // about 5K ids (one concat), then about 150K (past a slice of 64K ids)
      for (const [i, content] of [`${"short enough, 数学 ok\n".repeat(300)}${uniqueTail()}`, `${"a longer one, é 42\n".repeat(30_000)}${uniqueTail()}`].entries()) {
        const res = await postChat(app, key, { messages: [{ role: "system", content: "s" }, { role: "user", content }] });
        expect(res.statusCode).toBe(200);
        const call = app.agentjet.store.tracker.callsOf("e1")[i]!;
        expect(call.segments[1]!.ids).toBeInstanceOf(Int32Array);
        expect(engine.prompts[i]).toEqual(tok.encode(`<|im_start|>system\ns<|im_end|>\n<|im_start|>user\n${content}<|im_end|>\n<|im_start|>assistant\n`));
      }
      expect(engine.prompts[1]!.length).toBeGreaterThan(1 << 16);
    } finally {
      await app.close();
    }
  }, 120_000);
});

/** A tail no other test's message has (the tokenizer's segment cache lives as long as the process). */
function uniqueTail(): string {
  return `${Date.now()}-${Math.random()}`;
}
