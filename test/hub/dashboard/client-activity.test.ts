import { describe, expect, it } from "vitest";
import { ClientActivity } from "../../../hub/dashboard/client-activity.ts";

const hello = (clientId: string, running: string[] = []) =>
  ({ type: "hello", protocol: 1, clientId, envs: [{ name: "arith", version: "1.2.0", hash: "a".repeat(64) }], concurrency: 4, running }) as never;
const assign = (episodeId: string) => ({ type: "assign", episode: { episodeId } }) as never;
const message = (m: Record<string, unknown>) => m as never;

describe("ClientActivity (the dashboard's clients panel)", () => {
  it("shows each client's environments, concurrency, in-flight episodes, last seen, ended and failed", () => {
    let now = 1_000;
    const activity = new ClientActivity(() => now);
    activity.connected(hello("c1"));
    for (const id of ["e1", "e2", "e3"]) activity.sent("c1", assign(id));
    now = 2_000;
    activity.received("c1", message({ type: "end", episodeId: "e1" }));
    activity.received("c1", message({ type: "abort", episodeId: "e2" }));
    // An episode the client does not hold is counted neither way.
    activity.received("c1", message({ type: "end", episodeId: "unknown" }));
    expect(activity.list()).toEqual([
      { clientId: "c1", connected: true, envs: [{ name: "arith", version: "1.2.0", hash: "a".repeat(64), dev: false }], concurrency: 4, inFlight: 1, connectedAt: 1_000, lastSeen: 2_000, ended: 1, failed: 1 },
    ]);
  });

  it("takes a heartbeat's running list and a cancel as the in-flight set; a departed client stays listed, disconnected, and keeps its counts when it returns", () => {
    const activity = new ClientActivity(() => 0);
    activity.connected(hello("c1"));
    activity.sent("c1", assign("e1"));
    activity.sent("c1", assign("e2"));
    activity.sent("c1", message({ type: "cancel", episodeId: "e1" }));
    expect(activity.list()[0]!.inFlight).toBe(1);
    activity.received("c1", message({ type: "heartbeat", running: ["e2", "e3", "e4"] }));
    expect(activity.list()[0]!.inFlight).toBe(3);
    activity.received("c1", message({ type: "end", episodeId: "e3" }));
    activity.disconnected("c1");
    expect(activity.list()[0]).toMatchObject({ connected: false, inFlight: 0, ended: 1 });
    activity.connected(hello("c1", ["e9"]));
    expect(activity.list()[0]).toMatchObject({ connected: true, inFlight: 1, ended: 1 });
  });

  it("keeps the latest departed clients only: clients restarted with new ids do not pile up in a long-running server's list", () => {
    let now = 0;
    const activity = new ClientActivity(() => now, 3);
    activity.connected(hello("live"));
    for (let i = 0; i < 10; i++) {
      now = i;
      activity.connected(hello(`c${i}`));
      activity.received(`c${i}`, message({ type: "heartbeat", running: [] }));
      activity.disconnected(`c${i}`);
    }
    expect(activity.list().map((c) => [c.clientId, c.connected])).toEqual([
      ["live", true],
      ["c7", false],
      ["c8", false],
      ["c9", false],
    ]);
  });
});
