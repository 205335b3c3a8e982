/** The structured decisions of the game, the prompts that ask for them, and their validation. */

export type AskKind = "discuss" | "wolf-vote" | "witch" | "seer" | "hunter" | "speech" | "vote" | "last-words";

export type Decision =
  | { kind: "discuss"; speech: string; agree: boolean }
  | { kind: "wolf-vote" | "vote"; vote: string }
  | { kind: "witch"; resurrect: boolean; poison: string | null }
  | { kind: "seer"; name: string }
  | { kind: "hunter"; shoot: boolean; name: string | null }
  /** Said aloud: a built-in player's line, or an external seat's accusation (`I say PlayerN is a werewolf.`). */
  | { kind: "speech" | "last-words"; text: string };

/** What a player is asked to decide, with the legal targets for that player. */
export interface Ask {
  kind: AskKind;
  agents: string[];
  /** The question, per agent. */
  prompt: Record<string, string>;
  /** Legal target names, per agent (votes exclude the voter; speeches: whom one may accuse). */
  legal: Record<string, string[]>;
  /** Witch only: whether healing (the night's victim, not herself) and poison are still possible. */
  canHeal?: boolean;
  canPoison?: boolean;
}

/** The JSON object a reply carries: the last balanced {...} in the text. */
export function extractJson(text: string): Record<string, unknown> | null {
  // lastIndexOf(_, -1) searches from 0 again, so the scan stops explicitly after position 0.
  for (let end = text.lastIndexOf("}"); end >= 0; end = end > 0 ? text.lastIndexOf("}", end - 1) : -1) {
    let depth = 0;
    for (let i = end; i >= 0; i--) {
      const c = text[i];
      if (c === "}") depth++;
      else if (c === "{") depth--;
      if (depth === 0) {
        try {
          const v: unknown = JSON.parse(text.slice(i, end + 1));
          if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
        } catch {
          // not JSON: try an earlier closing brace
        }
        break;
      }
    }
  }
  return null;
}

export type Parsed = { ok: true; decision: Decision } | { ok: false; reason: string };

function nameField(obj: Record<string, unknown>, field: string, legal: readonly string[]): string | { error: string } {
  const v = obj[field];
  if (typeof v !== "string") return { error: `"${field}" must be a player name` };
  const name = legal.find((l) => l.toLowerCase() === v.trim().toLowerCase());
  return name ?? { error: `"${v}" is not one of: ${legal.join(", ")}` };
}

/** Validates one reply against what was asked. */
export function parseDecision(ask: Ask, agent: string, text: string): Parsed {
  const legal = ask.legal[agent] ?? [];
  const obj = extractJson(text);
  if (!obj) return { ok: false, reason: "no JSON object found in the reply" };
  switch (ask.kind) {
    case "discuss": {
      const n = nameField(obj, "kill", legal);
      if (typeof n !== "string") return { ok: false, reason: n.error };
      if (typeof obj.reach_agreement !== "boolean") return { ok: false, reason: '"reach_agreement" must be true or false' };
      return { ok: true, decision: { kind: "discuss", speech: `Let us kill ${n}.`, agree: obj.reach_agreement } };
    }
    case "speech":
    case "last-words": {
      if (obj.accuse === null) return { ok: true, decision: { kind: ask.kind, text: "I have no accusation." } };
      const n = nameField(obj, "accuse", legal);
      return typeof n === "string" ? { ok: true, decision: { kind: ask.kind, text: `I say ${n} is a werewolf.` } } : { ok: false, reason: n.error };
    }
    case "wolf-vote":
    case "vote": {
      const n = nameField(obj, "vote", legal);
      return typeof n === "string" ? { ok: true, decision: { kind: ask.kind, vote: n } } : { ok: false, reason: n.error };
    }
    case "seer": {
      const n = nameField(obj, "name", legal);
      return typeof n === "string" ? { ok: true, decision: { kind: "seer", name: n } } : { ok: false, reason: n.error };
    }
    case "witch": {
      if (typeof obj.resurrect !== "boolean") return { ok: false, reason: '"resurrect" must be true or false' };
      if (obj.resurrect && !ask.canHeal) return { ok: false, reason: "you cannot heal tonight" };
      if (obj.poison === null || obj.poison === undefined || obj.resurrect)
        return { ok: true, decision: { kind: "witch", resurrect: obj.resurrect, poison: null } };
      if (!ask.canPoison) return { ok: false, reason: "you have no poison left" };
      const n = nameField(obj, "poison", legal);
      return typeof n === "string" ? { ok: true, decision: { kind: "witch", resurrect: false, poison: n } } : { ok: false, reason: n.error };
    }
    case "hunter": {
      if (typeof obj.shoot !== "boolean") return { ok: false, reason: '"shoot" must be true or false' };
      if (!obj.shoot) return { ok: true, decision: { kind: "hunter", shoot: false, name: null } };
      const n = nameField(obj, "name", legal);
      return typeof n === "string" ? { ok: true, decision: { kind: "hunter", shoot: true, name: n } } : { ok: false, reason: n.error };
    }
  }
}

/** The legal choice taken after an invalid reply and one failed re-prompt. */
export function fallbackDecision(ask: Ask, agent: string, pick: <T>(xs: readonly T[]) => T): Decision {
  const legal = ask.legal[agent] ?? [];
  switch (ask.kind) {
    case "discuss":
      return { kind: "discuss", speech: "(no comment)", agree: true };
    case "wolf-vote":
    case "vote":
      return { kind: ask.kind, vote: pick(legal) };
    case "seer":
      return { kind: "seer", name: pick(legal) };
    case "witch":
      return { kind: "witch", resurrect: false, poison: null };
    case "hunter":
      return { kind: "hunter", shoot: false, name: null };
    case "speech":
    case "last-words":
      return { kind: ask.kind, text: "(silence)" };
  }
}

export const FORMATS: Record<AskKind, string> = {
  discuss: 'JSON: {"kill": "<candidate>", "reach_agreement": true|false}',
  "wolf-vote": 'JSON: {"vote": "<candidate>"}',
  witch: 'JSON: {"resurrect": true|false, "poison": "<candidate>" or null}',
  seer: 'JSON: {"name": "<candidate>"}',
  hunter: 'JSON: {"shoot": true|false, "name": "<candidate>" or null}',
  speech: 'JSON: {"accuse": "<candidate>" or null}',
  vote: 'JSON: {"vote": "<candidate>"}',
  "last-words": 'JSON: {"accuse": "<candidate>" or null}',
};

type JsonSchema = Record<string, unknown>;

const object = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const oneOf = (names: readonly (string | null)[]): JsonSchema => ({ enum: [...names] });

/**
 * The JSON schema of exactly the legal replies to `ask` for `agent`: names are `enum`s of the legal
 * targets, so a policy whose decoding is constrained to it (the observation's `responseFormat`) cannot
 * make an invalid move. `null` where the move may be declined.
 */
export function replySchema(ask: Ask, agent: string): JsonSchema {
  const legal = ask.legal[agent] ?? [];
  switch (ask.kind) {
    case "discuss":
      return object({ kill: oneOf(legal), reach_agreement: { type: "boolean" } });
    case "wolf-vote":
    case "vote":
      return object({ vote: oneOf(legal) });
    case "seer":
      return object({ name: oneOf(legal) });
    case "witch": {
      const decline = object({ resurrect: { const: false }, poison: oneOf(ask.canPoison ? [...legal, null] : [null]) });
      return ask.canHeal ? { anyOf: [object({ resurrect: { const: true }, poison: { const: null } }), decline] } : decline;
    }
    case "hunter":
      return { anyOf: [object({ shoot: { const: true }, name: oneOf(legal) }), object({ shoot: { const: false }, name: { const: null } })] };
    case "speech":
    case "last-words":
      return object({ accuse: oneOf([...legal, null]) });
  }
}
