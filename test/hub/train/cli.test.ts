import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readEvents } from "./helpers.ts";
import { type CliResult, REPO, removeTempDirs, runCli, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

describe("agentjet train (CLI)", () => {
  it("explains itself with --help", async () => {
    const r = await runCli(["train", "--help"], tempDir("train-cli"));
    expect(r.code).toBe(0);
    for (const word of ["--example", "--resume", "--json", "quickstart", "report.html", "Exit codes"]) expect(r.stdout).toContain(word);
  });

  it("answers bad input with the documented exit codes", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-cli");
    mkdirSync(join(cwd, "not-a-run"));
    writeFileSync(join(cwd, "empty.yaml"), "");
    const cases: Array<[string[], number, string]> = [
      [[], 2, "exactly one of"],
      [["--example", "quickstart", "--port", "http"], 2, "--port must be an integer"],
      [["--example", "quickstart", "--steps", "0"], 2, "--steps must be an integer"],
      [["--example", "quickstart", "--warm-start", "x"], 2, "--warm-start must be an integer"],
      // an unset shell variable: Number("") is 0, which skipped the warm-start, or listened on a random port
      [["--example", "quickstart", "--warm-start", ""], 2, "--warm-start must be an integer 0-1000000, got ''"],
      [["--example", "quickstart", "--port", ""], 2, "--port must be an integer 0-65535, got ''"],
      [["--resume", "not-a-run", "--from", "elsewhere"], 2, "--from and --warm-start start a run"],
      [["--example", "no-such-example"], 3, "quickstart"],
      [["--resume", "not-a-run"], 3, "not a run directory"],
      // it said "invalid run config" of a file that is not there
      [["missing.yaml"], 3, "agentjet train: cannot read the run config\nmissing.yaml: cannot read: ENOENT"],
      [["not-a-run"], 3, "agentjet train: cannot read the run config\nnot-a-run: cannot read: EISDIR"],
      [["empty.yaml"], 2, "empty.yaml  the file holds no config (it is empty or only comments)"],
    ];
    for (const [args, code, text] of cases) {
      const r = await runCli(["train", ...args], cwd);
      expect({ args, code: r.code }).toEqual({ args, code });
      expect(r.stderr).toContain(text);
    }
  });

  it("a config that leaves an environment's role unmapped is named, without a stack trace", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-cli");
    const config = (await readFile(join(REPO, "examples/quickstart.yaml"), "utf8")).replace("roles: { solver: main }", "roles: { agent: main }");
    await writeFile(join(cwd, "run.yaml"), config);
    const r = await runCli(["train", "run.yaml", "--warm-start", "0", "--port", "0", "--run-dir", "run", "--json"], cwd);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("agentjet train: environment 'arith' has agents with role 'solver', which the run config does not map (AJ_ERR_SCHEDULER_UNMAPPED_ROLE)");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1)!)).toMatchObject({ ok: false, error: { code: "AJ_ERR_SCHEDULER_UNMAPPED_ROLE" } });
  });

  // Regression: --from with a path that is not there failed once the run had written run.db, and the same
  // command with the path corrected was then refused (AJ_ERR_TRAIN_RUN_DIR_IN_USE) until the directory was removed.
  it("--from a path that is not there is refused before the run directory holds a run", { timeout: 60_000 }, async () => {
    const cwd = tempDir("train-cli");
    const r = await runCli(["train", "--example", "quickstart", "--from", "runs/typo", "--port", "0", "--run-dir", "run", "--json", "--no-report"], cwd);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`run.init (--from) '${join(cwd, "runs", "typo")}' does not exist`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // the code is the JSON line's, not part of its message
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1)!)).toEqual({ ok: false, error: { code: "AJ_ERR_TRAIN_WARM_START", message: expect.not.stringContaining("(AJ_ERR_") } });
    expect(existsSync(join(cwd, "run", "run.db"))).toBe(false);
  });

  // Regression: --warm-start N on a config without a warmStart section did nothing, silently.
  it("--warm-start on a config without warmStart runs the section's defaults", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-cli");
    const config = (await readFile(join(REPO, "examples/quickstart.yaml"), "utf8")).replace(/^warmStart:.*$/m, "").replace(/^eval:.*$/m, "");
    expect(config).not.toContain("warmStart");
    await writeFile(join(cwd, "run.yaml"), config);
    const r = await runCli(["train", "run.yaml", "--warm-start", "2", "--steps", "1", "--port", "0", "--run-dir", "run", "--json", "--no-report"], cwd);
    expect(r.code, r.stderr).toBe(0);
    const warm = readEvents(join(cwd, "run")).filter((e) => e.type === "warm-start");
    expect(warm.at(-1)).toMatchObject({ type: "warm-start", step: 2 });
  });

  it("--json prints one event per line, the same events as metrics.jsonl; report rebuilds report.html", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-cli");
    const r = await runCli(["train", "--example", "quickstart", "--warm-start", "0", "--steps", "2", "--port", "0", "--run-dir", "run", "--json", "--no-report"], cwd);
    expect(r.code, r.stderr).toBe(0);
    const printed = r.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string });
    expect(printed).toEqual(readEvents(join(cwd, "run")));
    expect(printed.filter((e) => e.type === "step")).toHaveLength(2);
    expect(printed.at(-1)).toMatchObject({ type: "end", reason: "done", step: 2 });

    // --no-report left it out; `agentjet report <run-dir>` builds it from the run directory.
    expect(existsSync(join(cwd, "run", "report.html"))).toBe(false);
    const report = await runCli(["report", "run"], cwd);
    expect(report.code, report.stderr).toBe(0);
    expect(existsSync(join(cwd, "run", "report.html"))).toBe(true);
  });

  // Regression (issue 22, item 8): a start that failed on a busy port left run.db behind, and the rerun
  // was refused with AJ_ERR_TRAIN_RUN_DIR_IN_USE and told to --resume a run that never ran.
  it("a start that fails on a busy port leaves no run.db, and the same command on a free port runs", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-cli");
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    const port = (busy.address() as { port: number }).port;
    const args = ["train", "--example", "quickstart", "--warm-start", "0", "--steps", "1", "--run-dir", "run", "--json", "--no-report"];
    try {
      const failed = await runCli([...args, "--port", String(port)], cwd);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain("the server port is in use");
      expect(existsSync(join(cwd, "run", "run.db"))).toBe(false);
    } finally {
      await new Promise<void>((r) => busy.close(() => r()));
    }
    const rerun = await runCli([...args, "--port", "0"], cwd);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(readEvents(join(cwd, "run")).at(-1)).toMatchObject({ type: "end", reason: "done", step: 1 });
  });

  it("Ctrl-C stops cleanly with exit 130, and --resume finishes the run", { timeout: 180_000 }, async () => {
    const cwd = tempDir("train-cli");
    const args = ["train", "--example", "quickstart", "--warm-start", "0", "--steps", "8", "--port", "0", "--run-dir", "run", "--json", "--no-report"];
    let interrupted = false;
    const { code, stderr } = await runCli(args, cwd, (stdout, child) => {
      if (stdout.includes('"type":"step","time"') && stdout.includes('"step":3,') && !interrupted) interrupted = child.kill("SIGINT");
    });
    expect(code, stderr).toBe(130);
    expect(stderr).toContain("agentjet train --resume");
    const stoppedAt = readEvents(join(cwd, "run")).at(-1) as { type: string; reason: string; step: number };
    expect(stoppedAt).toMatchObject({ type: "end", reason: "interrupted" });
    expect(stoppedAt.step).toBeLessThan(8);

    const resumed = await runCli(["train", "--resume", "run", "--port", "0", "--json"], cwd);
    expect(resumed.code, resumed.stderr).toBe(0);
    const events = readEvents(join(cwd, "run"));
    expect(events.filter((e) => e.type === "step").map((e) => (e as { step: number }).step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(events.at(-1)).toMatchObject({ type: "end", reason: "done", step: 8 });
  });

  // Regression: a run that failed before its first step (a bad warm-start file) could not be run again as
  // it was: the fresh start was told to --resume, which replays the saved config.yaml and fails the same way.
  it("a fresh start into a run directory whose run never kept a step says it can be removed to start afresh", { timeout: 60_000 }, async () => {
    const cwd = tempDir("train-cli");
    mkdirSync(join(cwd, "run"));
    writeFileSync(join(cwd, "run", "run.db"), "");
    const r = await runCli(["train", "--example", "quickstart", "--run-dir", "run", "--port", "0"], cwd);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("holds a run that stopped before its first checkpoint");
    expect(r.stderr).toContain("remove the directory");
  });

  // Regression: `train --resume run` while another `train` ran in `run` was accepted, and both wrote the
  // same run.db, metrics.jsonl and checkpoints at once.
  it("a second train or --resume on a run directory in use is refused, naming the process; the lock goes when the run stops", { timeout: 180_000 }, async () => {
    const cwd = tempDir("train-cli");
    const args = ["train", "--example", "quickstart", "--warm-start", "0", "--steps", "200", "--port", "0", "--run-dir", "run", "--json", "--no-report"];
    let second: Promise<[CliResult, CliResult]> | null = null;
    const first = await runCli(args, cwd, (stdout, child) => {
      if (second !== null || !stdout.includes('"type":"step","time"')) return;
      second = Promise.all([runCli(["train", "--resume", "run", "--port", "0"], cwd), runCli(args, cwd)]).finally(() => child.kill("SIGINT"));
    });
    expect(first.code, first.stderr).toBe(130);
    const [resumed, again] = await second!;
    for (const r of [resumed, again]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("AJ_ERR_TRAIN_RUN_DIR_IN_USE");
      expect(r.stderr).toMatch(/is in use by process \d+ on /);
    }
    expect(existsSync(join(cwd, "run", "run.lock"))).toBe(false);
    expect(readEvents(join(cwd, "run")).filter((e) => e.type === "start")).toHaveLength(1);
  });

  // Regression: Ctrl-C during the warm-start saved the half-trained weights as a step-0 checkpoint, and
  // --resume went on to RL from it, never playing the warm-start again.
  it("Ctrl-C during the warm-start writes no checkpoint, and --resume plays the whole warm-start again", { timeout: 180_000 }, async () => {
    const cwd = tempDir("train-cli");
    const args = ["train", "--example", "quickstart", "--warm-start", "300", "--steps", "1", "--port", "0", "--run-dir", "run", "--json", "--no-report"];
    let interrupted = false;
    const first = await runCli(args, cwd, (stdout, child) => {
      if (!interrupted && stdout.includes('"type":"warm-start"')) interrupted = child.kill("SIGINT");
    });
    expect(first.code, first.stderr).toBe(130);
    expect(existsSync(join(cwd, "run", "checkpoints", "latest.json"))).toBe(false);
    const before = readEvents(join(cwd, "run")) as Array<{ type: string; step?: number; steps?: number }>;
    expect(before.filter((e) => e.type === "warm-start").at(-1)!.step).toBeLessThan(300);
    expect(before.some((e) => e.type === "log" && String((e as { message?: string }).message).includes("(train --resume, or serve) plays the warm-start again"))).toBe(true);

    const resumed = await runCli(["train", "--resume", "run", "--port", "0", "--json", "--no-report"], cwd);
    expect(resumed.code, resumed.stderr).toBe(0);
    const events = readEvents(join(cwd, "run")) as Array<{ type: string; step?: number; steps?: number }>;
    const lastStart = events.map((e) => e.type).lastIndexOf("start");
    const warm = events.slice(0, lastStart).filter((e) => e.type === "warm-start");
    expect(warm.at(-1)).toMatchObject({ step: 300, steps: 300 });
    expect(events.filter((e) => e.type === "step").map((e) => e.step)).toEqual([1]);
  });

  // Regression: kill -9 of the CLI's wrapper process (bin/agentjet.js) left the real training process
  // running under pid 1, unseen, with its port, run directory and lock.
  it("kill -9 of the wrapper stops the training process cleanly (a checkpoint, an interrupted end, the lock gone)", { timeout: 180_000 }, async () => {
    const cwd = tempDir("train-cli");
    const args = ["train", "--example", "quickstart", "--warm-start", "0", "--steps", "200", "--port", "0", "--run-dir", "run", "--json", "--no-report"];
    let child = 0;
    const wrapper = await runCli(args, cwd, (stdout, proc) => {
      if (child !== 0 || !stdout.includes('"type":"step","time"')) return;
      child = Number(readFileSync(`/proc/${proc.pid}/task/${proc.pid}/children`, "utf8").trim().split(/\s+/)[0]);
      proc.kill("SIGKILL");
    });
    expect(wrapper.code).toBe(1);
    expect(child).toBeGreaterThan(0);
    const gone = async () => {
      for (let i = 0; i < 600; i++) {
        try {
          process.kill(child, 0);
        } catch {
          return true;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    };
    expect(await gone()).toBe(true);
    expect(readEvents(join(cwd, "run")).at(-1)).toMatchObject({ type: "end", reason: "interrupted" });
    expect(existsSync(join(cwd, "run", "run.lock"))).toBe(false);
  });

  // Regression (issue 22, item 8): a terminal's Ctrl-C reaches the whole foreground process group, so the
  // CLI's child got SIGINT twice (from the terminal and forwarded by bin/agentjet.js) and took the second
  // for "Ctrl-C again": it exited at once, with no checkpoint and no end event.
  it("a terminal's Ctrl-C (SIGINT to the whole process group) stops cleanly, not at once", { timeout: 180_000 }, async () => {
    const cwd = tempDir("train-cli");
    const args = ["train", "--example", "quickstart", "--warm-start", "0", "--steps", "50", "--port", "0", "--run-dir", "run", "--json", "--no-report"];
    // Its own process group, as a shell gives a foreground job.
    const child = spawn(process.execPath, [join(REPO, "bin", "agentjet.js"), ...args], { cwd, detached: true, env: { ...process.env, AGENTJET_CHILD: "" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let sent = false;
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        if (sent || !stdout.includes('"type":"step","time"')) return;
        sent = process.kill(-child.pid!, "SIGINT");
        // The forwarded copy can come late on a loaded machine: it must still not count as a second Ctrl-C.
        setTimeout(() => child.exitCode === null && child.kill("SIGINT"), 100);
      });
      child.on("exit", (c) => resolve(c));
    });
    expect(code, stderr).toBe(130);
    expect(stderr).toContain("agentjet train --resume");
    expect(readEvents(join(cwd, "run")).at(-1)).toMatchObject({ type: "end", reason: "interrupted" });
  });
});
