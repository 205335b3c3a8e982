import { existsSync } from "node:fs";
import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { buildReport } from "../report/build-report.ts";
import { readMetrics } from "../report/read-metrics.ts";
import { summariseSkill } from "../report/skill-summary.ts";
import type { StepEvent } from "../train/events.ts";
import { NotARunDirError } from "./errors.ts";
import { registerTool } from "./register-tool.ts";
import { resolveDir, type ToolContext } from "./tool-context.ts";

const SkillRange = z.object({ first: z.number(), last: z.number(), firstStep: z.number().int(), lastStep: z.number().int(), firstBeforeWarmStart: z.boolean(), episodes: z.number().int() });
const Skill = z.object({
  perEnv: z.record(z.string(), z.object({ greedy: SkillRange.optional(), sampled: SkillRange.optional() })).describe("Held-out success per environment and eval mode, first to last evaluation"),
  warnings: z.array(z.string()),
  filteredShare: z.number().nullable(),
  headline: z.array(z.string()),
});

/** `agentjet report --json`'s summary (hub/report/build-report.ts ReportSummary). */
const ReportSummary = z.object({
  steps: z.number().int(),
  rewardFirst: z.record(z.string(), z.number()),
  rewardLast: z.record(z.string(), z.number()),
  tokenSavings: z.object({ callTokens: z.number(), sampleTokens: z.number(), ratio: z.number() }),
  failures: z.record(z.string(), z.number()),
  codeVersions: z.array(z.object({ env: z.string(), hash: z.string(), dev: z.boolean(), episodes: z.number(), meanReward: z.number(), firstStep: z.number(), lastStep: z.number() })),
  failedGroups: z.object({ groups: z.number(), episodes: z.number() }),
  skill: Skill,
  rewardParts: z.array(z.object({ env: z.string(), part: z.string(), episodes: z.number(), mean: z.number(), first: z.number(), last: z.number() })),
  skippedLines: z.array(z.number().int()).describe("Lines of metrics.jsonl that could not be read (a torn last line, or a damaged file): left out of the summary"),
  files: z.array(z.string()),
});

const CompareRun = z.object({
  runDir: z.string(),
  steps: z.number().int().describe("Training steps recorded"),
  endReason: z.string().nullable(),
  headline: z.array(z.string()),
  heldOut: z.record(z.string(), z.object({ greedy: z.number().nullable(), sampled: z.number().nullable(), step: z.number().int().nullable() })).describe("The last held-out success per environment and mode"),
  finalStep: z
    .object({ step: z.number().int(), perEnv: z.record(z.string(), z.object({ meanReward: z.number(), success: z.number() })), loss: z.record(z.string(), z.number()) })
    .nullable()
    .describe("The last training step: reward and success of its training episodes, loss per policy"),
  warnings: z.array(z.string()),
});

function metricsOf(runDir: string): string {
  const path = join(runDir, "metrics.jsonl");
  if (!existsSync(path)) throw new NotARunDirError(runDir, "metrics.jsonl");
  return path;
}

function compareOne(runDir: string): z.input<typeof CompareRun> {
  const { events } = readMetrics(metricsOf(runDir));
  const skill = summariseSkill(events);
  const steps = events.filter((e): e is StepEvent => e.type === "step");
  const last = steps.at(-1);
  const end = events.findLast((e) => e.type === "end");
  return {
    runDir,
    steps: steps.length,
    endReason: end?.type === "end" ? end.reason : null,
    headline: skill.headline,
    heldOut: Object.fromEntries(
      Object.entries(skill.perEnv).map(([env, r]) => [env, { greedy: r.greedy?.last ?? null, sampled: r.sampled?.last ?? null, step: (r.greedy ?? r.sampled)?.lastStep ?? null }]),
    ),
    finalStep: last
      ? {
          step: last.step,
          perEnv: Object.fromEntries(Object.entries(last.perEnv).map(([env, m]) => [env, { meanReward: m.meanReward, success: m.success }])),
          loss: Object.fromEntries(Object.entries(last.perPolicy).map(([p, m]) => [p, m.loss])),
        }
      : null,
    warnings: skill.warnings,
  };
}

export function registerReportTools(server: McpServer, ctx: ToolContext): void {
  registerTool(server, {
    name: "report_read",
    title: "A run's report summary",
    description:
      "Builds a run's report.html and plots from its metrics.jsonl (as `agentjet report`) and returns the summary `agentjet report --json` prints: held-out success per environment and mode (skill.headline), reward first and last quarter, token savings, failures, code versions, reward parts, the files written.",
    input: z.object({ run: z.string().min(1).describe("The run: the id run_start returned, or a run directory") }),
    result: ReportSummary,
    run: async (a) => {
      const runDir = resolveDir(ctx, "run", a.run);
      metricsOf(runDir);
      return buildReport(runDir);
    },
  });
  registerTool(server, {
    name: "report_compare",
    title: "Compare runs",
    description:
      "Two or more runs side by side from their metrics.jsonl (nothing is written): the last held-out success per environment and mode (the headline), the last step's training reward, success and loss, and the warnings. `best` names the run with the highest last held-out success per environment (greedy when any run measured it, else sampled).",
    input: z.object({ runs: z.array(z.string().min(1)).min(2).describe("Run ids or run directories") }),
    result: z.object({
      runs: z.array(CompareRun),
      best: z.record(z.string(), z.object({ runDir: z.string(), mode: z.enum(["greedy", "sampled"]), success: z.number() })),
    }),
    annotations: { readOnlyHint: true },
    run: async (a) => {
      const runs = a.runs.map((ref) => compareOne(resolveDir(ctx, "run", ref)));
      const best: Record<string, { runDir: string; mode: "greedy" | "sampled"; success: number }> = {};
      for (const env of new Set(runs.flatMap((r) => Object.keys(r.heldOut)))) {
        // One mode for every run of an environment: greedy when any run measured it.
        const mode = runs.some((r) => (r.heldOut[env]?.greedy ?? null) !== null) ? "greedy" : "sampled";
        for (const r of runs) {
          const success = r.heldOut[env]?.[mode] ?? null;
          if (success !== null && success > (best[env]?.success ?? -1)) best[env] = { runDir: r.runDir, mode, success };
        }
      }
      return { runs, best };
    },
  });
}
