import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { showEpisode } from "../../../hub/mcp/episode-tools.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createTracker } from "../../../server/tracker/tracker.ts";
import { seedRunDb } from "../../helpers/seed-run-db.ts";
import { trackedCall } from "../../server/helpers/tracked-call.ts";

const dir = mkdtempSync(join(tmpdir(), "aj-mcp-show-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("episode_show on an agent's multi-turn episode (rows that leave out what repeats the previous call)", () => {
  it("shows each call's messages whole and its whole prompt's tokens", () => {
    const path = join(dir, "run.db");
    seedRunDb(path, { episodes: 1 });
    const db = openRunDb(path);
    const tracker = createTracker(db);
    let messages: unknown[] = [{ role: "system", content: "be brief" }];
    for (let seq = 0; seq < 3; seq++) {
      messages = [...messages, { role: "user", content: `q${seq}` }];
      const segments = messages.map((_, i) => ({ role: "user" as const, text: `m${i}`, ids: [i, i] }));
      tracker.record(trackedCall({ callId: `c${seq}`, episodeId: "ep-0000000", seq, messages, segments, headerIds: [9] }));
      messages = [...messages, { role: "assistant", content: `a${seq}` }];
    }
    tracker.close();
    db.close();
    const readOnly = new Database(path, { readonly: true });
    // the last call's row holds its two new messages only
    expect(readOnly.prepare("SELECT messages_from AS m, segments_from AS s FROM calls WHERE call_id = 'c2'").get()).toEqual({ m: 4, s: 4 });
    const shown = showEpisode(readOnly, dir, "ep-0000000", 10, 100);
    readOnly.close();
    expect(shown.calls.map((c) => c.messages.map((m) => m.content))).toEqual([
      ["be brief", "q0"],
      ["be brief", "q0", "a0", "q1"],
      ["be brief", "q0", "a0", "q1", "a1", "q2"],
    ]);
    expect(shown.calls.map((c) => c.promptTokens)).toEqual([2 * 2 + 1, 4 * 2 + 1, 6 * 2 + 1]);
  });
});
