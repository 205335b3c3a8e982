import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, runCli, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

/** `agentjet` itself (hub/cli/main.ts): the command list, `help`, and what it says to no command at all. */
describe("agentjet (CLI)", () => {
  it("--help lists every command on stdout; no command is a usage error, its usage on stderr", { timeout: 60_000 }, async () => {
    const cwd = tempDir("cli-main");
    const help = await runCli(["--help"], cwd);
    expect(help.code).toBe(0);
    for (const name of ["client", "config", "env", "mcp", "report", "serve", "sweep", "train"]) expect(help.stdout).toMatch(new RegExp(`^  ${name} +[A-Z]`, "m"));
    // Regression: exit 2 with the usage on stdout, where a script reads results
    const none = await runCli([], cwd);
    expect(none).toMatchObject({ code: 2, stdout: "" });
    expect(none.stderr).toBe(help.stdout);
  });

  // Regression: a --project that does not exist was accepted, and every tool failed later on something else.
  it("mcp refuses a --project that is not a directory", { timeout: 60_000 }, async () => {
    const cwd = tempDir("cli-main");
    const r = await runCli(["mcp", "--project", "/nonexistent/agentjet-project"], cwd);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toBe("agentjet mcp: --project '/nonexistent/agentjet-project' is not a directory\n");
  });

  // Regression: `agentjet help train` printed the list of commands.
  it("help <command> [subcommand] is <command> [subcommand] --help", { timeout: 60_000 }, async () => {
    const cwd = tempDir("cli-main");
    const [train, trainHelp, envAdd, unknown] = await Promise.all([
      runCli(["help", "train"], cwd),
      runCli(["train", "--help"], cwd),
      runCli(["help", "env", "add"], cwd),
      runCli(["help", "frobnicate"], cwd),
    ]);
    expect(train).toMatchObject({ code: 0, stdout: trainHelp.stdout });
    expect(train.stdout).toMatch(/^Usage: agentjet train <config.yaml>/);
    expect(envAdd.code).toBe(0);
    expect(envAdd.stdout).toMatch(/^agentjet env add <name>\[@version\]/);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^agentjet: unknown command 'frobnicate'/);
  });
});
