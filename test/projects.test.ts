import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { E2E, INTEGRATION, TEST_FILES } from "../vitest.projects.ts";

const REPO = join(import.meta.dirname, "..");

/** The globs vitest.projects.ts uses (`**` and `*` only) as a regular expression over repo-relative paths. */
function globToRegExp(glob: string): RegExp {
  const source = glob
    .split(/(\*\*\/|\*)/)
    .map((part) => (part === "**/" ? "(?:.*/)?" : part === "*" ? "[^/]*" : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`);
}

const matches = (globs: readonly string[], file: string): boolean => globs.some((g) => globToRegExp(g).test(file));

const files = readdirSync(join(REPO, "test"), { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split("\\").join("/")}`)
  .filter((f) => !f.includes("/node_modules/"));
const tests = files.filter((f) => matches([TEST_FILES], f));

/** The project of each test file, the way vitest.config.ts includes and excludes them. */
function projectsOf(file: string): string[] {
  const e2e = matches(E2E, file);
  const integration = !e2e && matches(INTEGRATION, file);
  return [...(e2e ? ["e2e"] : []), ...(integration ? ["integration"] : []), ...(!e2e && !integration ? ["unit"] : [])];
}

describe("vitest projects", () => {
  it("put every test file in exactly one project", () => {
    expect(tests.length).toBeGreaterThan(100);
    expect(tests.filter((f) => projectsOf(f).length !== 1)).toEqual([]);
  });

  it("list each file once, under one project, and name no file that is gone", () => {
    expect(tests.filter((f) => matches(E2E, f) && matches(INTEGRATION, f))).toEqual([]);
    expect([...E2E, ...INTEGRATION].filter((g) => !tests.some((f) => globToRegExp(g).test(f)))).toEqual([]);
  });

  it("leave no file that looks like a test outside them (it would never run)", () => {
    expect(files.filter((f) => /\.(test|spec)\.[cm]?[jt]sx?$/.test(f) && !tests.includes(f))).toEqual([]);
  });
});
