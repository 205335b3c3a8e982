import { createRng, deriveSeed } from "./rng.ts";

export type Role = "werewolf" | "villager" | "seer" | "witch" | "hunter";
export type Side = "werewolves" | "villagers";

export const PLAYERS = ["Player1", "Player2", "Player3", "Player4", "Player5", "Player6", "Player7", "Player8", "Player9"] as const;

const DECK: readonly Role[] = ["werewolf", "werewolf", "werewolf", "villager", "villager", "villager", "seer", "witch", "hunter"];

/** Deals the 9 roles to the seats, reproducibly from the task's seed. */
export function dealRoles(taskSeed: number): Record<string, Role> {
  const deck = createRng(deriveSeed(taskSeed, "deal")).shuffle(DECK);
  return Object.fromEntries(PLAYERS.map((p, i) => [p, deck[i]!]));
}

export function sideOf(role: Role): Side {
  return role === "werewolf" ? "werewolves" : "villagers";
}
