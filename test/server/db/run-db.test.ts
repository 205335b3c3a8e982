import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { callRowSql, openRunDb } from "../../../server/db/run-db.ts";
import { fromCallRows, type CallRow } from "../../../server/tracker/read-call-rows.ts";

/** `calls` as its first release created it, with one whole row. */
function oldRunDb(path: string): void {
  const db = new Database(path);
  db.exec(`CREATE TABLE calls (call_id TEXT PRIMARY KEY, episode_id TEXT NOT NULL, agent_id TEXT NOT NULL, policy TEXT NOT NULL, trainable INTEGER NOT NULL,
    seq INTEGER NOT NULL, messages TEXT NOT NULL, tools TEXT, segments TEXT NOT NULL, header_ids TEXT NOT NULL, output_ids TEXT NOT NULL,
    output_logprobs TEXT NOT NULL, output_text TEXT NOT NULL, finish_reason TEXT NOT NULL, version INTEGER NOT NULL, started_at INTEGER NOT NULL, latency_ms REAL NOT NULL)`);
  db.prepare("INSERT INTO calls VALUES ('c0', 'e1', 'solver', 'main', 1, 0, ?, NULL, ?, '[3]', '[4,5]', '[-0.1,-0.2]', 'ok', 'stop', 0, 0, 1)").run(
    JSON.stringify([{ role: "user", content: "hi" }]),
    JSON.stringify([{ role: "user", text: "hi", ids: [1, 2] }]),
  );
  db.close();
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), "aj-run-db-"));
  dirs.push(dir);
  return join(dir, "run.db");
};

describe("run.db: a file written before the calls table's newer columns", () => {
  it("read-only, its readers count each prompt from its ids and read its rows whole", () => {
    const path = tempDb();
    oldRunDb(path);
    const db = new Database(path, { readonly: true });
    const sql = callRowSql(db);
    expect(db.prepare(`SELECT ${sql.promptTokens} AS p, ${sql.messagesFrom} AS m FROM calls`).get()).toEqual({ p: 3, m: 0 });
    expect(fromCallRows(db.prepare("SELECT * FROM calls").all() as CallRow[])[0]!.messages).toEqual([{ role: "user", content: "hi" }]);
    db.close();
  });

  it("opened by the server, it gets the columns; its old rows still count and read the same", () => {
    const path = tempDb();
    oldRunDb(path);
    const db = openRunDb(path);
    const sql = callRowSql(db);
    expect(db.prepare(`SELECT ${sql.promptTokens} AS p, ${sql.messagesFrom} AS m, segments_from, tools_repeated FROM calls`).get()).toEqual({ p: 3, m: 0, segments_from: 0, tools_repeated: 0 });
    expect(fromCallRows(db.prepare("SELECT * FROM calls").all() as CallRow[])[0]!.segments).toEqual([{ role: "user", text: "hi", ids: [1, 2] }]);
    db.close();
    // opening again adds nothing twice
    openRunDb(path).close();
  });
});
