import { describe, expect, it } from "vitest";
import { checkRoleTargets, resolveSeats } from "../../../hub/scheduler/resolve-seats.ts";

const known = { policies: ["wolf", "wolf1", "wolf2", "village"], frozen: ["opponent"] };
const seats = [
  { id: "P1", role: "villager" },
  { id: "P2", role: "werewolf" },
  { id: "P3", role: "seer" },
  { id: "P4", role: "werewolf" },
];

describe("resolveSeats", () => {
  it("takes role#k (k-th seat of the role, in seat order), then the role, then *", () => {
    const out = resolveSeats("ww", seats, { "werewolf#1": "wolf1", werewolf: "wolf2", seer: "opponent", "*": "@builtin" }, known);
    expect(out.agents).toEqual([
      { agentId: "P2", role: "werewolf", target: { kind: "policy", name: "wolf1" } },
      { agentId: "P3", role: "seer", target: { kind: "frozen", name: "opponent" } },
      { agentId: "P4", role: "werewolf", target: { kind: "policy", name: "wolf2" } },
    ]);
    expect(out.builtin).toEqual(["P1"]);
  });

  it("names the unmapped role and the unknown target", () => {
    expect(() => resolveSeats("ww", seats, { werewolf: "wolf" }, known)).toThrow(/role 'villager'/);
    expect(() => resolveSeats("ww", seats, { "*": "nobody" }, known)).toThrow(/'\*' to 'nobody'/);
    expect(() => checkRoleTargets("ww", { seer: "ghost" }, known)).toThrow(/AJ_ERR|'seer' to 'ghost'/);
  });
});
