import { type JsonSchemaNode, runConfigJsonSchema, schemaAlternatives as alternatives } from "./json-schema.ts";

/** A key of the input that names no field of the run config. */
export interface UnknownField {
  /** Where it is: the path of the object that holds it, then the key. */
  path: Array<string | number>;
  key: string;
  /** The fields that object has, for the message. */
  fields: string[];
}

let schema: JsonSchemaNode | undefined;

/** Keys starting with this are the user's own (a home for YAML anchors, as in docker-compose): never fields, never refused. */
export const EXTENSION = "x-";

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A discriminated alternative (`kind: embedded`) matches only its own `kind`. */
function matchesKind(alt: JsonSchemaNode, value: Record<string, unknown>): boolean {
  const kind = alt.properties?.kind;
  if (kind === undefined || typeof value.kind !== "string") return true;
  return kind.const !== undefined ? kind.const === value.kind : kind.enum === undefined || kind.enum.includes(value.kind);
}

function walk(node: JsonSchemaNode, value: unknown, path: Array<string | number>, out: UnknownField[]): void {
  const alts = alternatives(node);
  if (Array.isArray(value)) {
    const list = alts.find((a) => a.items !== undefined);
    if (list) value.forEach((v, i) => walk(list.items!, v, [...path, i], out));
    return;
  }
  if (!isPlainObject(value)) return;
  const objects = alts.filter((a) => a.properties !== undefined && matchesKind(a, value));
  if (objects.length > 0) {
    // the alternative the value fits best: fewest keys it does not have
    const unknownIn = (a: JsonSchemaNode) => Object.keys(value).filter((k) => !(k in a.properties!));
    const alt = objects.reduce((best, a) => (unknownIn(a).length < unknownIn(best).length ? a : best));
    for (const [k, v] of Object.entries(value)) {
      const child = alt.properties![k];
      if (child !== undefined) walk(child, v, [...path, k], out);
      else if (!k.startsWith(EXTENSION)) out.push({ path, key: k, fields: Object.keys(alt.properties!) });
    }
    return;
  }
  // a map (`policies`, `roles`, `options`): any key, each value by the map's schema
  const map = alts.find((a) => typeof a.additionalProperties === "object");
  if (map) for (const [k, v] of Object.entries(value)) walk(map.additionalProperties as JsonSchemaNode, v, [...path, k], out);
}

/**
 * Keys of a run config (as parsed from YAML or JSON, before validation) that name no field: zod drops
 * them silently, so a misspelt `run.stepz` would run with the default steps. Maps (`policies`,
 * `environments[].roles`, `options`) take any key; their values are checked as their entries' schema.
 * Keys starting with `x-` are left alone.
 */
export function unknownFields(input: unknown): UnknownField[] {
  schema ??= runConfigJsonSchema() as JsonSchemaNode;
  const out: UnknownField[] = [];
  walk(schema, input, [], out);
  return out;
}

/** The field most like `key` (a typo's edit distance of at most 2, or a different case), if any. */
export function closestField(key: string, fields: readonly string[]): string | undefined {
  let best: { field: string; d: number } | undefined;
  for (const f of fields) {
    const d = f.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, f);
    if (d <= 2 && (best === undefined || d < best.d)) best = { field: f, d };
  }
  return best?.field;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}
