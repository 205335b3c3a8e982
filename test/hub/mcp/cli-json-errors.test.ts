import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseJson, REPO, removeTempDirs, runCli, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

/** Issue 26: every command a coding agent calls prints, with --json, its error's AJ_ERR_* code and exits with the documented code. */
describe("--json errors of the commands coding agents call", () => {
  it("train, report, config and every env subcommand give { ok: false, error: { code } } with an AJ_ERR code and their exit codes", { timeout: 120_000 }, async () => {
    const cwd = tempDir("cli-json");
    mkdirSync(join(cwd, "taken"));
    writeFileSync(join(cwd, "taken", "file"), "x");
    writeFileSync(join(cwd, "bad.yaml"), "run: { steps: many }\n");
    const cases: Array<[string[], number, string]> = [
      [["train", "--json"], 2, "AJ_ERR_USAGE"],
      [["train", "missing.yaml", "--json"], 3, "AJ_ERR_CONFIG_UNREADABLE"],
      [["train", "bad.yaml", "--json"], 2, "AJ_ERR_INVALID_CONFIG"],
      [["train", "--example", "no-such-example", "--json"], 3, "AJ_ERR_TRAIN_UNKNOWN_EXAMPLE"],
      [["report", "--json"], 2, "AJ_ERR_USAGE"],
      [["report", "nowhere", "--json"], 3, "AJ_ERR_REPORT_NOT_A_RUN_DIR"],
      [["config", "bogus", "--json"], 2, "AJ_ERR_USAGE"],
      // was a raw ENOENT stack trace and no JSON line
      [["config", "schema", "--out", "no-such-folder/schema.json", "--json"], 1, "AJ_ERR_OUTPUT_UNWRITABLE"],
      [["env", "docs", "manifest", "--out", "no-such-folder/manifest.md", "--json"], 1, "AJ_ERR_OUTPUT_UNWRITABLE"],
      [["env", "init", "Bad", "--json"], 2, "AJ_ERR_USAGE"],
      [["env", "init", "ok-name", "--dir", "taken", "--json"], 1, "AJ_ERR_SCAFFOLD_DIR_NOT_EMPTY"],
      [["env", "test", "nothing-here", "--json"], 3, "AJ_ERR_STORE_NOT_INSTALLED"],
      [["env", "add", "no-such-env", "--json"], 3, "AJ_ERR_ENV_NOT_FOUND"],
      // extra arguments were ignored
      [["config", "schema", "extra", "--json"], 2, "AJ_ERR_USAGE"],
      [["report", "run-a", "run-b", "--json"], 2, "AJ_ERR_USAGE"],
      // the code was Node's ERR_PARSE_ARGS_UNKNOWN_OPTION
      [["env", "list", "--bogus", "--json"], 2, "AJ_ERR_USAGE"],
      // taken and ignored: the scaffold went to ./ok-name
      [["env", "init", "ok-name", "--project", "elsewhere", "--json"], 2, "AJ_ERR_USAGE"],
      // no JSON line
      [["env", "no-such-subcommand", "--json"], 2, "AJ_ERR_USAGE"],
      [["env", "constructor", "--json"], 2, "AJ_ERR_USAGE"],
      // the code was ENOENT
      [["env", "pack", join(REPO, "environments", "arith"), "--out", "no-such-folder", "--json"], 1, "AJ_ERR_OUTPUT_UNWRITABLE"],
    ];
    for (const [args, exit, code] of cases) {
      const r = await runCli(args, cwd);
      expect({ args, exit: r.code }).toEqual({ args, exit });
      expect(parseJson(r), r.stderr).toMatchObject({ ok: false, error: { code, message: expect.any(String) } });
    }
    expect(existsSync(join(cwd, "ok-name"))).toBe(false);
  });

  // Regression: `env docs --json` printed the Markdown, though every env subcommand takes --json.
  it("env docs --json prints the reference in one object, or the file it wrote", async () => {
    const cwd = tempDir("cli-json");
    const docs = await runCli(["env", "docs", "manifest", "--json"], cwd);
    expect(docs.code).toBe(0);
    expect(parseJson(docs)).toEqual({ ok: true, docs: readFileSync(join(REPO, "docs", "environment-manifest.md"), "utf8") });
    const out = await runCli(["env", "docs", "protocol", "--out", "protocol.md", "--json"], cwd);
    expect(parseJson(out)).toEqual({ ok: true, out: "protocol.md" });
    expect(readFileSync(join(cwd, "protocol.md"), "utf8")).toBe(readFileSync(join(REPO, "docs", "environment-protocol.md"), "utf8"));
  });

  it("config --json prints the schema in one object", async () => {
    const r = await runCli(["config", "schema", "--json"], tempDir("cli-json"));
    expect(r.code).toBe(0);
    expect(parseJson(r)).toMatchObject({ ok: true, schema: { title: "agentjet run config" } });
  });
});
