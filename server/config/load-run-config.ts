import { readFile } from "node:fs/promises";
import { type Document, isMap, isScalar, LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { type RunConfig, RunConfigSchema } from "./run-config.ts";
import { closestField, EXTENSION, unknownFields } from "./unknown-fields.ts";

/** One problem in a run config, located at its field (and line, when the YAML has it). */
export interface ConfigIssue {
  /** Dotted path of the offending field, e.g. `policies.main.engine.kind`; "" for the whole document. */
  path: string;
  message: string;
  /** What would fix it, when there is something to say beyond the message. */
  hint?: string;
  /** 1-based line and column in the YAML source. */
  line?: number;
  column?: number;
}

export type LoadRunConfigResult =
  | { kind: "ok"; config: RunConfig }
  | { kind: "invalid"; source: string; issues: ConfigIssue[] }
  | { kind: "unreadable"; source: string; message: string };

function hintFor(issue: z.core.$ZodIssue, input: unknown): string | undefined {
  if (issue.code === "invalid_type") {
    if (input === undefined) return "this field is required";
    if (issue.expected === "number" && typeof input === "string" && input.trim() !== "" && !Number.isNaN(Number(input))) {
      return "write the number without quotes";
    }
  }
  if (issue.code === "too_small" && issue.origin === "array") return `needs at least ${String(issue.minimum)} item(s)`;
  if (issue.code === "invalid_union" && "discriminator" in issue) return "check the spelling of 'kind'";
  return undefined;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** Parses and validates a run config (YAML text). `source` names it in messages. */
export function parseRunConfig(text: string, source = "run config"): LoadRunConfigResult {
  const lines = new LineCounter();
  // merge keys (`<<: *defaults`) merge, as YAML 1.1 tools do
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, merge: true });
  if (doc.errors.length > 0) {
    return {
      kind: "invalid",
      source,
      issues: doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        const issue: ConfigIssue = { path: "", message: `YAML: ${e.message.split("\n")[0]}` };
        if (pos) Object.assign(issue, { line: pos.line, column: pos.col });
        return issue;
      }),
    };
  }
  const input: unknown = doc.toJS();
  // An empty file (or comments only) would otherwise be named by the two fields it lacks.
  if (input === null || input === undefined) {
    return { kind: "invalid", source, issues: [{ path: "", message: "the file holds no config (it is empty or only comments)", hint: "a run config sets at least policies and environments; every field: agentjet config docs" }] };
  }
  const checked = checkConfig(input);
  if (checked.config !== undefined) return { kind: "ok", config: checked.config };
  return { kind: "invalid", source, issues: checked.issues.map(({ issue, path, atKey }) => locate(doc, lines, issue, path, atKey)) };
}

/**
 * Validates a run config already read (an object, not YAML: a sweep's inline `config`): its issues name
 * their fields but no lines.
 */
export function checkRunConfig(input: unknown, source = "run config"): LoadRunConfigResult {
  const checked = checkConfig(input);
  if (checked.config !== undefined) return { kind: "ok", config: checked.config };
  return { kind: "invalid", source, issues: checked.issues.map((i) => i.issue) };
}

interface UnlocatedIssue {
  issue: ConfigIssue;
  path: string[];
  /** An unknown key: point at the key itself, not at its value. */
  atKey: boolean;
}

/** The schema's issues and the keys that name no field; the config when there are none. */
function checkConfig(input: unknown): { config?: RunConfig; issues: UnlocatedIssue[] } {
  const parsed = RunConfigSchema.safeParse(input);
  const issues = parsed.success
    ? []
    : parsed.error.issues.map((i): UnlocatedIssue => {
        const path = i.path.map(String);
        const issue: ConfigIssue = { path: path.join("."), message: i.message };
        const hint = hintFor(i, valueAt(input, i.path));
        if (hint !== undefined) issue.hint = hint;
        return { issue, path, atKey: false };
      });
  for (const u of unknownFields(input)) {
    const path = [...u.path, u.key].map(String);
    const near = closestField(u.key, u.fields);
    const issue: ConfigIssue = { path: path.join("."), message: `not a field (${u.path.length === 0 ? "the run config" : u.path.join(".")} has: ${u.fields.join(", ")})` };
    issue.hint = near === undefined ? `every field: agentjet config docs; a key of your own (YAML anchors) starts with ${EXTENSION}` : `did you mean '${near}'?`;
    issues.push({ issue, path, atKey: true });
  }
  return parsed.success && issues.length === 0 ? { config: parsed.data, issues } : { issues };
}

/** Puts an issue at its key (`atKey`), else at the nearest node that exists (a missing field points at its parent). */
function locate(doc: Document, lines: LineCounter, issue: ConfigIssue, path: readonly string[], atKey: boolean): ConfigIssue {
  const at = (offset: number): ConfigIssue => {
    const pos = lines.linePos(offset);
    return Object.assign(issue, { line: pos.line, column: pos.col });
  };
  if (atKey) {
    const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
    const pair = isMap(parent) ? parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === path[path.length - 1]) : undefined;
    if (isScalar(pair?.key) && pair.key.range) return at(pair.key.range[0]);
  }
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    if (range && (n > 0 || isMap(node))) return at(range[0]);
  }
  return issue;
}

export async function loadRunConfig(path: string): Promise<LoadRunConfigResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    return { kind: "unreadable", source: path, message: (err as Error).message };
  }
  return parseRunConfig(text, path);
}

/** One line per issue: `run.yaml:12:5  policies.main.engine.kind: Invalid input (hint: ...)`. */
export function formatConfigIssues(result: Exclude<LoadRunConfigResult, { kind: "ok" }>): string {
  if (result.kind === "unreadable") return `${result.source}: cannot read: ${result.message}`;
  return result.issues
    .map((i) => {
      const at = i.line === undefined ? result.source : `${result.source}:${i.line}:${i.column ?? 1}`;
      const field = i.path === "" ? "" : `${i.path}: `;
      return `${at}  ${field}${i.message}${i.hint === undefined ? "" : ` (hint: ${i.hint})`}`;
    })
    .join("\n");
}
