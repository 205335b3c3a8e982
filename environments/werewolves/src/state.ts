import { type Role, type Side, sideOf } from "./roles.ts";

export interface GameEvent {
  round: number;
  phase: "night" | "day";
  text: string;
}

/**
 * The game's state. Messages to players go through `tell`, addressed to exactly the players who may
 * see them; each player's pending messages are delivered with the next question it is asked.
 */
export class GameState {
  readonly alive = new Set<string>();
  readonly pending = new Map<string, string[]>();
  /** Everything each player has been told, in order (for the information-leak test). */
  readonly heard = new Map<string, string[]>();
  /** Seer's own checks: name -> is a werewolf. */
  readonly seerChecks = new Map<string, boolean>();
  /** Players named werewolves by a speaker claiming to be the seer ("I am the seer. PlayerN is a werewolf."). */
  readonly accused = new Set<string>();
  /** Each speaker's latest speech that names a player (public). */
  readonly said = new Map<string, string>();
  /** Last night's deaths (null before the first dawn). */
  lastNight: string[] | null = null;
  /** The last day vote (null before the first): each voter's vote (null: none cast) and who went out (null: a tie). */
  lastVote: { votes: ReadonlyArray<readonly [voter: string, vote: string | null]>; out: string | null } | null = null;
  readonly log: GameEvent[] = [];
  /** The built-in werewolves' proposal for tonight's kill (reset every night). */
  wolfProposal: string | null = null;
  healUsed = false;
  poisonUsed = false;
  round = 0;
  winner: Side | null = null;

  constructor(readonly roles: Readonly<Record<string, Role>>, readonly seats: readonly string[]) {
    for (const p of seats) {
      this.alive.add(p);
      this.pending.set(p, []);
      this.heard.set(p, []);
    }
  }

  living(): string[] {
    return this.seats.filter((p) => this.alive.has(p));
  }

  livingWith(role: Role): string[] {
    return this.living().filter((p) => this.roles[p] === role);
  }

  tell(to: readonly string[], text: string): void {
    for (const p of to) {
      this.pending.get(p)?.push(text);
      this.heard.get(p)?.push(text);
    }
  }

  /** Takes a player's undelivered messages. */
  drain(p: string): string[] {
    const msgs = this.pending.get(p) ?? [];
    this.pending.set(p, []);
    return msgs;
  }

  kill(p: string): void {
    this.alive.delete(p);
  }

  /** Wolves win at 2 x wolves >= living; villagers when no wolf is left. */
  checkWin(): Side | null {
    const wolves = this.livingWith("werewolf").length;
    if (wolves === 0) return "villagers";
    if (2 * wolves >= this.living().length) return "werewolves";
    return null;
  }

  sideOf(p: string): Side {
    return sideOf(this.roles[p]!);
  }

  record(phase: GameEvent["phase"], text: string): void {
    this.log.push({ round: this.round, phase, text });
  }

  /**
   * A public speech. Only a seer's claim names werewolves for the built-in villagers; a bare accusation
   * is remembered as said (every player hears it) but believed by no built-in player.
   */
  noteSpeech(speaker: string, text: string): void {
    if (/Player\d/.test(text)) this.said.set(speaker, text);
    if (!text.startsWith("I am the seer")) return;
    for (const m of text.matchAll(/\b(Player\d)\s+is\s+a\s+(?:were)?wolf\b/gi)) {
      const name = this.seats.find((s) => s.toLowerCase() === m[1]!.toLowerCase());
      if (name) this.accused.add(name);
    }
  }
}
