import type { Role } from "./roles.ts";

const RULES = [
  "You are playing Werewolves with 9 players (Player1 to Player9): 3 werewolves, 3 villagers, a seer, a witch and a hunter.",
  "Each night the werewolves choose a player to kill; the witch may heal the victim once and poison a player once; the seer checks one player's side.",
  "A hunter killed at night (not poisoned), or voted out, may shoot one player.",
  "Each day every living player speaks once, then all vote to eliminate one player; a tie eliminates no one.",
  "The villagers win when no werewolf is left. The werewolves win when they are at least half of the living players, or when 7 rounds pass.",
].join("\n");

const ROLE_NOTES: Record<Role, string> = {
  werewolf: "You are a werewolf. Work with your fellow werewolves; hide your role by day.",
  villager: "You are a villager. Find and vote out the werewolves.",
  seer: "You are the seer. Each night you learn whether one player is a werewolf.",
  witch: "You are the witch. You have one healing potion and one poison.",
  hunter: "You are the hunter. When you die you may shoot one player.",
};

export function systemPrompt(player: string, role: Role, teammates: readonly string[]): string {
  const team = role === "werewolf" ? ` Your fellow werewolves: ${teammates.join(", ") || "none"}.` : "";
  return `${RULES}\n\nYou are ${player}. ${ROLE_NOTES[role]}${team}\nKeep replies short. When asked for JSON, reply with exactly one JSON object.`;
}
