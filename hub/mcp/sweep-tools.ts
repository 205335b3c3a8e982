import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { InvalidArgumentsError, ProcessActiveError, SweepUnavailableError, UnknownProcessError } from "./errors.ts";
import { registerTool } from "./register-tool.ts";
import { printedError, StopInput, statusToolParts, stopProcess, tailOf, type ToolContext } from "./tool-context.ts";

const SWEEP_COMMAND = join(import.meta.dirname, "..", "cli", "commands", "sweep.ts");

const SweepRef = z.string().min(1).describe("The sweep: the id sweep_start returned, or its campaign directory");

const SweepStatus = z.object({
  id: z.string().nullable().describe("null: a campaign this server did not start"),
  campaignDir: z.string(),
  pid: z.number().int().nullable(),
  state: z.enum(["running", "done", "failed", "interrupted"]),
  exitCode: z.number().int().nullable(),
  name: z.string().nullable(),
  counts: z.record(z.string(), z.number().int()).describe("Runs per status (pending, running, done, failed, interrupted)"),
  runs: z.array(z.object({ id: z.string(), status: z.string(), runDir: z.string(), label: z.string().nullable(), exitCode: z.number().int().nullable() })),
  summary: z.unknown().describe("summary.json once the sweep has ended (null before)"),
  report: z.string().nullable().describe("report.html once written"),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  stderrTail: z.string(),
});
type Status = z.infer<typeof SweepStatus>;

/** campaign.json as far as these tools read it; the sweep command owns its full schema (hub/sweep/campaign.ts). */
const CampaignFile = z.looseObject({
  name: z.string().optional(),
  runs: z.array(z.looseObject({ id: z.string(), status: z.string(), runDir: z.string(), label: z.string().optional(), exitCode: z.number().int().nullable().optional() })),
});

function readJson(path: string): unknown {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch {
    return null;
  }
}

function sweepStatus(ctx: ToolContext, ref: string): Status {
  const record = ctx.processes.find("sweep", ref);
  const dir = record?.dir ?? resolve(ctx.projectDir, ref);
  const campaign = CampaignFile.safeParse(readJson(join(dir, "campaign.json")));
  if (!record && !campaign.success) throw new UnknownProcessError(ref, "sweep");
  const alive = record ? ctx.processes.isAlive(record) : false;
  const runs = campaign.success ? campaign.data.runs : [];
  const summary = readJson(join(dir, "summary.json"));
  const exitCode = record?.exit?.code ?? null;
  let state: Status["state"];
  if (alive) state = "running";
  else if (record?.exit) state = exitCode === 0 ? "done" : exitCode === 130 || record.exit.signal === "SIGINT" ? "interrupted" : "failed";
  else if (summary !== null) state = "done";
  else state = record ? "failed" : runs.some((r) => r.status === "running" || r.status === "pending") ? "running" : "done";
  const counts: Record<string, number> = {};
  for (const r of runs) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const logs = record ? ctx.processes.logsOf(record.id) : null;
  return {
    id: record?.id ?? null,
    campaignDir: dir,
    pid: record?.pid ?? null,
    state,
    exitCode,
    name: campaign.success ? (campaign.data.name ?? null) : null,
    counts,
    runs: runs.map((r) => ({ id: r.id, status: r.status, runDir: resolve(dir, r.runDir), label: r.label ?? null, exitCode: r.exitCode ?? null })),
    summary,
    report: existsSync(join(dir, "report.html")) ? join(dir, "report.html") : null,
    error: logs && state !== "running" && state !== "done" ? printedError(logs.stdout) : null,
    stderrTail: logs ? tailOf(logs.stderr) : "",
  };
}

export function registerSweepTools(server: McpServer, ctx: ToolContext): void {
  registerTool(server, {
    name: "sweep_start",
    title: "Start a sweep (a campaign of runs)",
    description:
      "Starts `agentjet sweep <sweep.yaml> --campaign-dir DIR --json` (or `--resume DIR`) as a detached child and returns at once. The campaign directory holds campaign.json (every run and its status) and, at the end, summary.json and report.html. Poll sweep_status; sweep_stop stops it cleanly.",
    input: z.object({
      sweepFile: z.string().optional().describe("The sweep file (YAML), relative to the project"),
      campaignDir: z.string().optional().describe("Where the campaign is written"),
      resume: z.string().optional().describe("Continue the campaign in this directory"),
    }),
    result: z.object({ id: z.string(), campaignDir: z.string(), pid: z.number().int(), command: z.array(z.string()), logs: z.object({ stdout: z.string(), stderr: z.string() }) }),
    run: async (a) => {
      if (!existsSync(SWEEP_COMMAND)) throw new SweepUnavailableError();
      if ((a.resume === undefined) === (a.sweepFile === undefined)) throw new InvalidArgumentsError("give either sweepFile (with campaignDir) or resume");
      if (a.sweepFile !== undefined && a.campaignDir === undefined) throw new InvalidArgumentsError("a new sweep needs campaignDir, so that its status can be read");
      const dir = resolve(ctx.projectDir, a.resume ?? a.campaignDir!);
      const active = ctx.processes.activeIn("sweep", dir);
      if (active) throw new ProcessActiveError(dir, active.id);
      const args = a.resume !== undefined ? ["sweep", "--resume", dir, "--json"] : ["sweep", resolve(ctx.projectDir, a.sweepFile!), "--campaign-dir", dir, "--json"];
      const id = ctx.processes.newId("sweep");
      const record = ctx.processes.start(id, "sweep", dir, args);
      return { id, campaignDir: dir, pid: record.pid, command: args, logs: ctx.processes.logsOf(id) };
    },
  });
  registerTool(server, {
    name: "sweep_status",
    title: "A sweep's state",
    description: "The sweep's state (running, done, failed, interrupted), every run's status and directory from campaign.json, counts per status, and summary.json and report.html once written.",
    ...statusToolParts("sweep", SweepRef, SweepStatus, (ref) => sweepStatus(ctx, ref)),
  });
  registerTool(server, {
    name: "sweep_stop",
    title: "Stop a sweep cleanly",
    description: "Sends the sweep SIGINT: its running trainings stop cleanly (checkpoints), it exits, and sweep_start with resume continues the campaign. With wait (default), answers once it has exited or after timeoutS.",
    input: z.object({ sweep: SweepRef, ...StopInput }),
    result: SweepStatus.extend({ timedOut: z.boolean() }),
    run: async (a) => {
      const record = ctx.processes.find("sweep", a.sweep);
      if (!record) throw new UnknownProcessError(a.sweep, "sweep");
      return stopProcess(ctx, record, a, (id) => sweepStatus(ctx, id));
    },
  });
}
