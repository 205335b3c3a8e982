import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, removeTempDirs, runCli, tempDir } from "../helpers.ts";

afterAll(removeTempDirs);

const jsonLines = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("agentjet sweep: the CLI's answers to bad input", () => {
  it("an unknown field path is a usage error (exit 2) naming the field, a coded error event with --json", async () => {
    const dir = tempDir("sweep-cli");
    writeFileSync(join(dir, "sweep.yaml"), `name: bad\nbase: ${join(REPO, "examples", "quickstart.yaml")}\nparameters:\n  training.optimizer.lr: [1e-4, 3e-4]\n`);
    const r = await runCli(["sweep", "sweep.yaml", "--json"], dir);
    expect(r.code).toBe(2);
    expect(jsonLines(r.stdout)).toEqual([expect.objectContaining({ event: "error", code: "AJ_ERR_SWEEP_UNKNOWN_FIELD", message: expect.stringContaining("training.optimizer.lr") })]);
    expect(r.stderr).toContain("'training'");
  });

  it("a missing campaign is not-found (exit 3); a bad flag is a usage error (exit 2)", async () => {
    const dir = tempDir("sweep-cli");
    const missing = await runCli(["sweep", "--resume", "nowhere", "--json"], dir);
    expect(missing.code).toBe(3);
    expect(jsonLines(missing.stdout)[0]).toMatchObject({ event: "error", code: "AJ_ERR_SWEEP_NO_CAMPAIGN" });
    const flag = await runCli(["sweep", "x.yaml", "--parallel", "0"], dir);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--parallel");
  });

  // A dry run said "valid" for a campaign directory that already held a sweep, which the real start refuses.
  it("--dry-run refuses a campaign directory that already holds a sweep, as the real start does", async () => {
    const dir = tempDir("sweep-cli");
    writeFileSync(join(dir, "sweep.yaml"), `name: dry\nbase: ${join(REPO, "examples", "quickstart.yaml")}\nseeds: [1]\n`);
    const fresh = await runCli(["sweep", "sweep.yaml", "--dry-run", "--campaign-dir", join(dir, "c")], dir);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain("1 runs, valid; campaign directory would be c\n");
    mkdirSync(join(dir, "c"));
    writeFileSync(join(dir, "c", "campaign.json"), "{}");
    const taken = await runCli(["sweep", "sweep.yaml", "--dry-run", "--campaign-dir", "c", "--json"], dir);
    expect(taken.code).toBe(2);
    expect(jsonLines(taken.stdout)).toEqual([expect.objectContaining({ event: "error", code: "AJ_ERR_SWEEP_CAMPAIGN_EXISTS" })]);
    // a directory outside the working directory is shown as given, not as ../../..
    const outside = tempDir("sweep-cli");
    const far = await runCli(["sweep", join(dir, "sweep.yaml"), "--dry-run", "--campaign-dir", join(outside, "c2")], REPO);
    expect(far.stdout).toContain(`campaign directory would be ${join(outside, "c2")}\n`);
  });

  it("--help explains the sweep file with an example; the shipped example expands and validates (--dry-run)", async () => {
    const help = await runCli(["sweep", "--help"], REPO);
    expect(help.code).toBe(0);
    for (const s of ["parameters:", "seeds:", "--resume", "--parallel", "campaign.json", "Examples:"]) expect(help.stdout).toContain(s);
    const dry = await runCli(["sweep", "examples/sweeps/quickstart.yaml", "--dry-run"], REPO);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("4 runs, valid");
  });
});
