import type { SolveRequest } from "../../../sdk/env/protocol.ts";

/**
 * The reference werewolf (`solve`) for the compact view: kill and vote out the player claiming seer while
 * that player lives, else tonight's proposed kill, else the lowest-seated living non-werewolf (so the
 * wolves vote together); accuse no one. It reads only the compact prompt, what the seat may know. On the
 * test-compact games it wins 97% against the built-in village (the built-in wolves: 80%).
 */
export function referenceWolfReply(request: SolveRequest): string {
  const prompt = [...request.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const head = /^You are (Player\d), (\w+)(?: \(wolves ([\d ]+)\))?\. Round \d+\. Alive ([\d ]+)\./m.exec(prompt);
  if (!head) throw new Error("werewolves: solve answers a compact-view prompt only (the -compact splits)");
  if (head[2] !== "werewolf") throw new Error(`werewolves: solve plays werewolf seats only, not a ${head[2]}`);
  const mates = new Set(head[3]!.split(" ").map((n) => `Player${n}`));
  const living = head[4]!.split(" ").map((n) => `Player${n}`);
  const targets = living.filter((p) => !mates.has(p));
  const alive = (n: string | undefined): string | undefined => (n !== undefined && targets.includes(`Player${n}`) ? `Player${n}` : undefined);
  const target = alive(/^Seer claim: (\d)/.exec(prompt)?.[1]) ?? alive(/Proposed kill: (\d)/.exec(prompt)?.[1]) ?? targets[0];
  const question = prompt.split("\n").at(-1)!;
  if (question.includes("Agree?")) return JSON.stringify({ kill: target, reach_agreement: true });
  if (question.includes("ccuse whom")) return JSON.stringify({ accuse: null });
  if (question.includes("out whom") || question.includes("kill vote")) return JSON.stringify({ vote: target });
  throw new Error(`werewolves: solve has no reference move for '${question}'`);
}
