import { describe, expect, it } from "vitest";
import { createClaimsGate } from "../../../server/episodes/claims-gate.ts";
import { createStoreEvents } from "../../../server/episodes/store-events.ts";

describe("claims gate", () => {
  it("tells listeners once per change, not on repeats", () => {
    const events = createStoreEvents((err) => {
      throw err;
    });
    const heard: string[] = [];
    events.on("paused", () => heard.push("paused"));
    events.on("resumed", () => heard.push("resumed"));
    const gate = createClaimsGate(events);
    gate.resume();
    gate.pause();
    gate.pause();
    expect(gate.paused()).toBe(true);
    gate.resume();
    gate.resume();
    expect(gate.paused()).toBe(false);
    expect(heard).toEqual(["paused", "resumed"]);
  });
});
