import { type JsonSchemaNode, runConfigJsonSchema, schemaAlternatives as alternatives } from "../../server/config/index.ts";
import { UnknownFieldError } from "./errors.ts";

/**
 * Dotted field paths into a run config, as docs/run-config.md names the fields: `run.steps`,
 * `policies.main.optimizer.lr` (a map entry by its key), `environments[0].weight` or
 * `environments[arith].weight` (a list element by index or by its `name`).
 */
export type Segment = { kind: "key"; key: string } | { kind: "index"; index: number } | { kind: "name"; name: string };

type JsonSchema = JsonSchemaNode;

let rootSchema: JsonSchema | undefined;
const schemaRoot = (): JsonSchema => (rootSchema ??= runConfigJsonSchema() as JsonSchema);

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Splits `a.b[0].c[name]` into segments; null when it is not a path. */
export function parseFieldPath(path: string): Segment[] | null {
  const segments: Segment[] = [];
  const re = /(?:^|\.)([^.[\]]+)|\[([^\]]+)\]/gy;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(path)) !== null) {
    end = re.lastIndex;
    const word = m[1] ?? m[2]!;
    if (/^\d+$/.test(word)) segments.push({ kind: "index", index: Number(word) });
    else if (m[2] !== undefined) segments.push({ kind: "name", name: word });
    else segments.push({ kind: "key", key: word });
  }
  return end === path.length && segments.length > 0 && segments[0]!.kind === "key" ? segments : null;
}

export function formatFieldPath(segments: readonly Segment[]): string {
  return segments.map((s, i) => (s.kind === "key" ? `${i ? "." : ""}${s.key}` : s.kind === "index" ? `[${s.index}]` : `[${s.name}]`)).join("");
}

type Walk = { ok: true; nodes: JsonSchema[] } | { ok: false; why: string; depth: number };

function describeType(s: JsonSchema): string {
  return Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? "value");
}

/** Follows `segments` from `node` (the config's own value beside it, for map keys and list elements). */
function walk(node: JsonSchema, value: unknown, segments: readonly Segment[], i: number): Walk {
  if (i === segments.length) return { ok: true, nodes: [node] };
  const at = formatFieldPath(segments.slice(0, i)) || "the run config";
  const seg = segments[i]!;
  const tries: Walk[] = [];
  for (const alt of alternatives(node)) {
    if (seg.kind === "key" && alt.properties) {
      const child = alt.properties[seg.key];
      tries.push(
        child
          ? walk(child, isPlainObject(value) ? value[seg.key] : undefined, segments, i + 1)
          : { ok: false, depth: i, why: `${at} has no field '${seg.key}' (its fields: ${Object.keys(alt.properties).join(", ")})` },
      );
    } else if (seg.kind === "key" && typeof alt.additionalProperties === "object") {
      const keys = isPlainObject(value) ? Object.keys(value) : [];
      tries.push(
        keys.includes(seg.key)
          ? walk(alt.additionalProperties, (value as Record<string, unknown>)[seg.key], segments, i + 1)
          : { ok: false, depth: i, why: `${at} has no entry '${seg.key}' in the base config (it has: ${keys.join(", ") || "none"})` },
      );
    } else if (seg.kind !== "key" && alt.type === "array" && alt.items) {
      const list = Array.isArray(value) ? value : [];
      const index = seg.kind === "index" ? seg.index : list.findIndex((e) => isPlainObject(e) && e.name === seg.name);
      const names = list.map((e, k) => (isPlainObject(e) && typeof e.name === "string" ? e.name : String(k)));
      tries.push(
        index >= 0 && index < list.length
          ? walk(alt.items, list[index], segments, i + 1)
          : { ok: false, depth: i, why: `${at} has no element ${seg.kind === "index" ? seg.index : `named '${seg.name}'`} in the base config (it has: ${names.join(", ") || "none"})` },
      );
    } else if (alt.type === "array") {
      tries.push({ ok: false, depth: i, why: `${at} is a list: name an element as ${at}[0] or ${at}[<name>]` });
    } else if (seg.kind !== "key") {
      tries.push({ ok: false, depth: i, why: `${at} is not a list` });
    }
  }
  const ok = tries.filter((t): t is Extract<Walk, { ok: true }> => t.ok);
  if (ok.length > 0) return { ok: true, nodes: ok.flatMap((t) => t.nodes) };
  const failed = tries.filter((t): t is Extract<Walk, { ok: false }> => !t.ok).sort((a, b) => b.depth - a.depth);
  return failed[0] ?? { ok: false, depth: i, why: `${at} is a ${alternatives(node).map(describeType).join(" or ")}: it has no fields` };
}

/**
 * Checks that `path` names a field of `config`'s schema (map entries and list elements must exist in
 * `config`); with `value` an object bound for an object field, each of its keys is checked too.
 * Throws UnknownFieldError naming the path and why.
 */
export function checkFieldPath(path: string, config: unknown, value?: unknown): Segment[] {
  const segments = parseFieldPath(path);
  if (segments === null) throw new UnknownFieldError(path, "not a field path (write it as in docs/run-config.md, e.g. policies.main.optimizer.lr or environments[0].weight)");
  checkSegments(path, segments, config, value);
  return segments;
}

function checkSegments(path: string, segments: readonly Segment[], config: unknown, value: unknown): void {
  const found = walk(schemaRoot(), config, segments, 0);
  if (!found.ok) throw new UnknownFieldError(path, found.why);
  if (!isPlainObject(value)) return;
  // An object value merges into an object field: its keys must be fields too (zod would drop a misspelt one
  // silently), and into a map of objects (policies): its keys must be entries. Maps of values (options, roles) take any key.
  const hasFields = (n: JsonSchema): boolean => alternatives(n).some((a) => a.properties !== undefined);
  const objectMap = (n: JsonSchema): boolean => alternatives(n).some((a) => typeof a.additionalProperties === "object" && hasFields(a.additionalProperties));
  if (!found.nodes.some((n) => hasFields(n) || objectMap(n))) return;
  for (const [k, v] of Object.entries(value)) {
    const sub = [...segments, { kind: "key", key: k } as const];
    checkSegments(formatFieldPath(sub), sub, config, v);
  }
}

/**
 * Sets the field at `segments` in `target` (a plain object tree, changed in place). `merge`: an object
 * value is merged into the object already there (an override's patch); otherwise it replaces it.
 */
export function setField(target: Record<string, unknown>, segments: readonly Segment[], value: unknown, merge: boolean): void {
  let node: unknown = target;
  for (const [i, seg] of segments.entries()) {
    const last = i === segments.length - 1;
    const at = formatFieldPath(segments.slice(0, i + 1));
    let holder: Record<string | number, unknown>;
    let key: string | number;
    if (seg.kind === "key") {
      if (!isPlainObject(node)) throw new UnknownFieldError(at, `${formatFieldPath(segments.slice(0, i))} is not an object in this config`);
      holder = node;
      key = seg.key;
    } else {
      if (!Array.isArray(node)) throw new UnknownFieldError(at, `${formatFieldPath(segments.slice(0, i))} is not a list in this config`);
      const index = seg.kind === "index" ? seg.index : node.findIndex((e) => isPlainObject(e) && e.name === seg.name);
      if (index < 0 || index >= node.length) throw new UnknownFieldError(at, "no such element in this config");
      holder = node as unknown as Record<number, unknown>;
      key = index;
    }
    if (last) {
      const existing = holder[key];
      holder[key] = merge && isPlainObject(value) && isPlainObject(existing) ? mergeObjects(existing, value) : structuredClone(value);
      return;
    }
    if (holder[key] === undefined) holder[key] = segments[i + 1]!.kind === "key" ? {} : [];
    node = holder[key];
  }
}

function mergeObjects(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const existing = out[k];
    out[k] = isPlainObject(v) && isPlainObject(existing) ? mergeObjects(existing, v) : structuredClone(v);
  }
  return out;
}
