import registry from "./codes.json" with { type: "json" };
import { EXIT } from "./exit-codes.ts";

/** What a code means, and how it surfaces: the HTTP status it answers with, the exit code a command ends with. */
export interface ErrorCodeInfo {
  meaning: string;
  http?: number;
  /** Omitted: a command that reports this code exits `EXIT.failure` (1). */
  exit?: number;
}

export interface ErrorGroup {
  title: string;
  codes: Readonly<Record<string, ErrorCodeInfo>>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function check(ok: boolean, where: string, what: string): asserts ok {
  if (!ok) throw new Error(`errors/codes.json: ${where}: ${what}`);
}

function checkKeys(v: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const unknown = Object.keys(v).filter((k) => !allowed.includes(k));
  check(unknown.length === 0, where, `unknown field ${unknown.join(", ")} (fields: ${allowed.join(", ")})`);
}

/** The exit names a code may give (`ok` is no error's). */
const EXIT_NAMES = Object.keys(EXIT).filter((name) => name !== "ok");

/**
 * The registry's groups (`codes.json`), each exit name resolved to its `EXIT` number. Throws on a malformed
 * registry (an unknown field or exit name, an HTTP status outside 400-599, an empty meaning, a code written
 * twice), so a typo in the file fails at import, in every test.
 */
export function parseErrorGroups(raw: unknown): ErrorGroup[] {
  check(isRecord(raw) && Array.isArray(raw.groups), "top level", "an object with a groups array");
  checkKeys(raw, ["about", "groups"], "top level");
  const seen = new Set<string>();
  return raw.groups.map((group: unknown, g) => {
    check(isRecord(group) && typeof group.title === "string" && group.title !== "" && Array.isArray(group.codes), `groups[${g}]`, "a title and a codes array");
    checkKeys(group, ["title", "codes"], `groups[${g}]`);
    const codes: Record<string, ErrorCodeInfo> = {};
    group.codes.forEach((row: unknown, r) => {
      const where = `${group.title}, codes[${r}]`;
      check(isRecord(row) && typeof row.code === "string" && /^AJ_ERR_[A-Z0-9_]+$/.test(row.code), where, "a code AJ_ERR_...");
      checkKeys(row, ["code", "http", "exit", "meaning"], `${where} (${row.code})`);
      check(!seen.has(row.code), where, `${row.code} is registered twice`);
      seen.add(row.code);
      const { code, http, exit, meaning } = row;
      check(typeof meaning === "string" && /\S/.test(meaning), where, `${code} has no meaning`);
      const info: ErrorCodeInfo = { meaning };
      if (http !== undefined) {
        check(Number.isInteger(http) && (http as number) >= 400 && (http as number) <= 599, where, `${code}: http ${String(http)} is not a 4xx or 5xx status`);
        info.http = http as number;
      }
      if (exit !== undefined) {
        check(typeof exit === "string" && EXIT_NAMES.includes(exit), where, `${code}: exit ${String(exit)} is not one of ${EXIT_NAMES.join(", ")}`);
        info.exit = EXIT[exit as keyof typeof EXIT];
      }
      codes[code] = info;
    });
    return { title: group.title, codes };
  });
}

/**
 * Every `AJ_ERR_...` code the project throws, answers or sends, by area, from `codes.json` (a data file: one
 * row a code). `docs/errors.md` is rendered from this (`agentjet config errors`); a test checks that every
 * code in the source is here, once.
 */
export const ERROR_GROUPS: readonly ErrorGroup[] = parseErrorGroups(registry);

/** Every registered code and its row, with the title of its group. */
export const ERROR_CODES: ReadonlyMap<string, ErrorCodeInfo & { group: string }> = new Map(
  ERROR_GROUPS.flatMap((g) => Object.entries(g.codes).map(([code, info]) => [code, { ...info, group: g.title }] as const)),
);
