import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { z } from "zod";
import { NoCampaignError } from "./errors.ts";
import type { PlannedRun } from "./expand.ts";

/**
 * A campaign directory's state, `campaign.json`: the expanded runs and where each stands. Rewritten
 * whole (a temporary file renamed over it) on every change, so a kill leaves the old or the new state.
 */
export const RunStatusSchema = z.enum(["pending", "running", "done", "failed", "interrupted"]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const CampaignRunSchema = z.object({
  id: z.string(),
  params: z.record(z.string(), z.unknown()),
  seed: z.number().int(),
  configKey: z.string(),
  label: z.string(),
  status: RunStatusSchema,
  /** The last start's exit code (null: never ended, or killed by a signal). */
  exitCode: z.number().int().nullable(),
  /** Relative to the campaign directory. */
  runDir: z.string(),
  config: z.string(),
  /** The `agentjet train` process of a running run (a sweep killed outright may leave it behind). */
  pid: z.number().int().optional(),
  /** Starts so far (a resumed run counts again). */
  starts: z.number().int(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
});
export type CampaignRun = z.infer<typeof CampaignRunSchema>;

export const CampaignSchema = z.object({
  version: z.literal(1),
  name: z.string(),
  /** The sweep file it was expanded from (absolute); a resume reads the campaign, never the file again. */
  sweepFile: z.string(),
  createdAt: z.string(),
  parallel: z.number().int().positive(),
  /** The sweep process running it now (null: none). */
  ownerPid: z.number().int().nullable(),
  runs: z.array(CampaignRunSchema),
});
export type Campaign = z.infer<typeof CampaignSchema>;

export const CAMPAIGN_FILE = "campaign.json";

export function campaignPath(dir: string): string {
  return join(dir, CAMPAIGN_FILE);
}

/** Atomically replaces campaign.json. */
export function writeCampaign(dir: string, campaign: Campaign): void {
  const file = campaignPath(dir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(campaign, null, 2)}\n`);
  renameSync(tmp, file);
}

export function readCampaign(dir: string): Campaign {
  const file = campaignPath(dir);
  if (!existsSync(file)) throw new NoCampaignError(dir, `it has no ${CAMPAIGN_FILE}`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new NoCampaignError(dir, `${file} is not JSON (${(err as Error).message})`);
  }
  const parsed = CampaignSchema.safeParse(json);
  if (!parsed.success) throw new NoCampaignError(dir, `${file} does not match the campaign schema: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/**
 * Creates a campaign directory from the expanded runs: each run's config (run.dir set to its run
 * directory) in configs/<id>.yaml, and campaign.json with every run pending.
 */
export function createCampaign(dir: string, o: { name: string; sweepFile: string; parallel: number; runs: readonly PlannedRun[] }): Campaign {
  mkdirSync(join(dir, "configs"), { recursive: true });
  const runs = o.runs.map((r): CampaignRun => {
    const runDir = join("runs", r.id);
    const config = join("configs", `${r.id}.yaml`);
    writeFileSync(join(dir, config), stringify({ ...r.config, run: { ...r.config.run, dir: join(dir, runDir) } }));
    return { id: r.id, params: r.params, seed: r.seed, configKey: r.configKey, label: r.label, status: "pending", exitCode: null, runDir, config, starts: 0 };
  });
  const campaign: Campaign = { version: 1, name: o.name, sweepFile: o.sweepFile, createdAt: new Date().toISOString(), parallel: o.parallel, ownerPid: null, runs };
  writeCampaign(dir, campaign);
  return campaign;
}
