import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorGroups } from "../../errors/codes.ts";
import { AgentJetError, ERROR_CODES, ERROR_GROUPS, exitCodeFor, EXIT, renderErrorDocs } from "../../errors/index.ts";

const REPO = join(import.meta.dirname, "..", "..");
/** The product's source: every code it throws, answers or sends is written in one of these. */
const SOURCE_DIRS = ["errors", "hub", "server", "sdk", "plugins", "environments", "bench", "bin"];
const SKIP_DIRS = new Set(["node_modules", "tests", "test", ".venv", "__pycache__", "dist", "templates"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : sourceFiles(path);
    return /\.(ts|js|mjs|py)$/.test(e.name) ? [path] : [];
  });
}

describe("error codes (errors/codes.json)", () => {
  it("docs/errors.md is what `agentjet config errors` prints (regenerate: agentjet config errors --out docs/errors.md)", () => {
    expect(readFileSync(join(REPO, "docs", "errors.md"), "utf8")).toBe(renderErrorDocs());
  });

  it("registers every AJ_ERR_ code written in the source", () => {
    const found = new Set<string>();
    for (const file of SOURCE_DIRS.flatMap((d) => sourceFiles(join(REPO, d)))) {
      for (const m of readFileSync(file, "utf8").matchAll(/AJ_ERR_[A-Z0-9_]+/g)) found.add(m[0]);
    }
    expect(found.size).toBeGreaterThan(100);
    expect([...found].filter((code) => !ERROR_CODES.has(code)).sort()).toEqual([]);
  });

  it("registers the HTTP status each literal `new HttpError(status, code)` answers with", () => {
    const mismatched: string[] = [];
    let seen = 0;
    for (const file of ["hub", "server"].flatMap((d) => sourceFiles(join(REPO, d)))) {
      for (const m of readFileSync(file, "utf8").matchAll(/(?:HttpError|fail)\((\d{3}), "(AJ_ERR_[A-Z0-9_]+)"/g)) {
        seen += 1;
        if (ERROR_CODES.get(m[2]!)?.http !== Number(m[1])) mismatched.push(`${m[2]} ${m[1]} (${file.slice(REPO.length + 1)})`);
      }
    }
    expect(seen).toBeGreaterThan(20);
    expect(mismatched).toEqual([]);
  });

  it("registers no code twice, and each with a meaning", () => {
    const all = ERROR_GROUPS.flatMap((g) => Object.keys(g.codes));
    expect(all.filter((code, i) => all.indexOf(code) !== i)).toEqual([]);
    for (const [code, info] of ERROR_CODES) {
      expect(code).toMatch(/^AJ_ERR_[A-Z0-9_]+$/);
      expect(info.meaning, code).toMatch(/\S/);
    }
  });

  it("refuses a malformed registry file at load: unknown field or exit name, bad status, a code twice", () => {
    const registry = (...rows: object[]) => ({ groups: [{ title: "T", codes: [{ code: "AJ_ERR_A", meaning: "a" }, ...rows] }] });
    expect(parseErrorGroups(registry({ code: "AJ_ERR_B", exit: "usage", http: 404, meaning: "b" }))).toEqual([
      { title: "T", codes: { AJ_ERR_A: { meaning: "a" }, AJ_ERR_B: { meaning: "b", http: 404, exit: EXIT.usage } } },
    ]);
    expect(() => parseErrorGroups(registry({ code: "AJ_ERR_B", exit: "usge", meaning: "b" }))).toThrow(/exit usge is not one of/);
    expect(() => parseErrorGroups(registry({ code: "AJ_ERR_B", exit: "ok", meaning: "b" }))).toThrow(/exit ok/);
    expect(() => parseErrorGroups(registry({ code: "AJ_ERR_B", http: 200, meaning: "b" }))).toThrow(/http 200/);
    expect(() => parseErrorGroups(registry({ code: "AJ_ERR_B", htpp: 404, meaning: "b" }))).toThrow(/unknown field htpp/);
    expect(() => parseErrorGroups(registry({ code: "AJ_ERR_A", meaning: "again" }))).toThrow(/AJ_ERR_A is registered twice/);
    expect(() => parseErrorGroups(registry({ code: "AJ_ERR_B", meaning: " " }))).toThrow(/AJ_ERR_B has no meaning/);
    expect(() => parseErrorGroups(registry({ code: "ERR_B", meaning: "b" }))).toThrow(/a code AJ_ERR_/);
  });

  it("gives an error its registered HTTP status and exit code", () => {
    const err = new AgentJetError("AJ_ERR_ENV_NOT_FOUND", "no such environment", { cause: new Error("why") });
    expect(err.name).toBe("AgentJetError");
    expect(err.exitCode).toBe(EXIT.notFound);
    expect((err.cause as Error).message).toBe("why");
    expect(new AgentJetError("AJ_ERR_EPISODE_NOT_FOUND", "gone").httpStatus).toBe(404);
    expect(new AgentJetError("AJ_ERR_EPISODE_NOT_FOUND", "gone", { httpStatus: 410 }).httpStatus).toBe(410);
    expect(exitCodeFor("AJ_ERR_STORE_INTEGRITY")).toBe(EXIT.integrity);
    expect(exitCodeFor("ERR_PARSE_ARGS_UNKNOWN_OPTION")).toBe(EXIT.usage);
    expect(exitCodeFor("AJ_ERR_TRAIN_STORAGE")).toBe(EXIT.failure);
    expect(exitCodeFor(undefined)).toBe(EXIT.failure);
  });
});
