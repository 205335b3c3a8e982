import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LiveFeed } from "../../../hub/dashboard/live-feed.ts";
import { openRunDb } from "../../../server/db/run-db.ts";
import { createEpisodeStore } from "../../../server/episodes/episode-store.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

describe("LiveFeed's episode-list version", () => {
  it("moves on watching a store and on each of its episode transitions, and stops when unwatched", () => {
    const db = openRunDb(join(tempDir("dash-feed"), "run.db"));
    const store = createEpisodeStore({ db, policies: ["main"], frozen: [], reclaimTimer: false });
    try {
      const feed = new LiveFeed();
      expect(feed.episodesVersion()).toBe(0);
      const unwatch = feed.watchEpisodes(store);
      expect(feed.episodesVersion()).toBe(1);
      const agents = { solver: { kind: "policy" as const, target: "main" } };
      store.register({ episodeId: "e1", taskId: "t1", env: "arith", agents });
      store.claim({ episodeId: "e1" });
      store.end("e1", { rewards: { solver: 1 } });
      store.register({ episodeId: "e2", taskId: "t2", env: "arith", agents });
      store.abort("e2", { kind: "crash", message: "boom" });
      expect(feed.episodesVersion()).toBe(6);
      unwatch();
      store.register({ episodeId: "e3", taskId: "t3", env: "arith", agents });
      expect(feed.episodesVersion()).toBe(6);
    } finally {
      store.close();
      db.close();
    }
  });
});
