import type { Role } from "./roles.ts";

const RULES = [
  "Werewolves, 9 players (Player1 to Player9): 3 werewolves, 3 villagers, a seer, a witch, a hunter.",
  "Night: the werewolves kill one player; the witch may heal the victim once and poison a player once; the seer checks one player's side.",
  "A hunter killed at night (not poisoned) or voted out may shoot one player.",
  "Day: each living player speaks, then all vote one player out (a tie: no one).",
  "Villagers win when no werewolf is left; werewolves when they are half the living players, or after 7 rounds.",
].join("\n");

const ROLE_NOTES: Record<Role, string> = {
  werewolf: "You are a werewolf.",
  villager: "You are a villager. Find and vote out the werewolves.",
  seer: "You are the seer. Each night you learn whether one player is a werewolf.",
  witch: "You are the witch. You have one healing potion and one poison.",
  hunter: "You are the hunter. When you die you may shoot one player.",
};

export function systemPrompt(player: string, role: Role, teammates: readonly string[]): string {
  const team = role === "werewolf" ? ` Your fellow werewolves: ${teammates.join(", ") || "none"}.` : "";
  return `${RULES}\n\nYou are ${player}. ${ROLE_NOTES[role]}${team}\nReply with exactly one JSON object.`;
}
