import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { SchedulerStateSchema } from "../scheduler/state.ts";
import { writeOrStopAsync } from "./storage.ts";

/**
 * A run's checkpoint: each policy's weights (its engine's own format) and where training stands. Written
 * between steps, while nothing is in flight, to `checkpoints/step-NNNNNN/`; `checkpoints/latest.json`
 * names the newest one.
 */
export const CheckpointStateSchema = z.object({
  format: z.literal(1),
  time: z.string(),
  /** Training steps the run has completed. */
  step: z.number().int().min(0),
  /** Weight version of each policy. */
  versions: z.record(z.string(), z.number().int()),
  scheduler: SchedulerStateSchema,
  /**
   * Written by a clean stop (Ctrl-C or the end): the sample pool in run.db matches it exactly. A periodic
   * checkpoint is not final; resuming from one after a crash starts the pool afresh.
   */
  final: z.boolean(),
});
export type CheckpointState = z.infer<typeof CheckpointStateSchema>;

export interface SavableEngine {
  save(dir: string): Promise<void>;
}

const LATEST = "latest.json";

export function checkpointsDir(runDir: string): string {
  return join(runDir, "checkpoints");
}

/**
 * Writes a checkpoint (into a temporary folder, renamed into place) and points `latest.json` at it. A
 * write that fails throws `StorageError` naming the path; the previous checkpoint stays the latest.
 */
export async function writeCheckpoint(
  runDir: string,
  engines: ReadonlyMap<string, SavableEngine>,
  state: Omit<CheckpointState, "format" | "time">,
): Promise<string> {
  const root = checkpointsDir(runDir);
  const name = `step-${String(state.step).padStart(6, "0")}`;
  const tmp = join(root, `.${name}.tmp`);
  await writeOrStopAsync(tmp, "create the checkpoint folder", async () => {
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp, { recursive: true });
  });
  for (const [policy, engine] of engines) {
    const dir = join(tmp, "policies", policy);
    await writeOrStopAsync(dir, `save policy '${policy}' to`, () => engine.save(dir));
  }
  const full: CheckpointState = { format: 1, time: new Date().toISOString(), ...state };
  await writeOrStopAsync(join(tmp, "state.json"), "write", () => writeFile(join(tmp, "state.json"), `${JSON.stringify(full, null, 2)}\n`));
  const dir = join(root, name);
  await writeOrStopAsync(dir, "move the checkpoint into", async () => {
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  });
  const latest = join(root, LATEST);
  await writeOrStopAsync(latest, "write", async () => {
    await writeFile(`${latest}.tmp`, `${JSON.stringify({ checkpoint: name })}\n`);
    await rename(`${latest}.tmp`, latest);
  });
  return dir;
}

/**
 * The newest checkpoint of a run (the one `latest.json` names, else the newest complete `step-*` folder);
 * `none` when the run never wrote one, `damaged` when it wrote some but the newest cannot be read (a
 * truncated or missing file): such a run is not one to play again from step 0.
 */
export function readLatestCheckpoint(
  runDir: string,
): { kind: "ok"; dir: string; state: CheckpointState } | { kind: "none"; why: string } | { kind: "damaged"; why: string } {
  const root = checkpointsDir(runDir);
  const latest = join(root, LATEST);
  const written = checkpointFolders(runDir);
  // `bad`: the checkpoint found damaged, not one to suggest
  const damaged = (why: string, bad?: string): { kind: "damaged"; why: string } => {
    const other = written.filter((n) => n !== bad).at(-1);
    const hint = other ? `; to resume from another checkpoint (${written.join(", ")} are there), name it in ${latest}: {"checkpoint":"${other}"}` : "";
    return { kind: "damaged", why: `${why}${hint}` };
  };
  if (!existsSync(latest)) {
    if (written.length === 0) return { kind: "none", why: `it has no ${join("checkpoints", LATEST)} (no step finished before it stopped)` };
    // A step folder appears whole (renamed into place) just before latest.json points at it: a process
    // killed in between left a complete checkpoint without a pointer, the newest folder.
    const newest = join(root, written.at(-1)!);
    const state = CheckpointStateSchema.safeParse(readJson(join(newest, "state.json")));
    if (state.success) return { kind: "ok", dir: newest, state: state.data };
    return damaged(`${latest} is missing`);
  }
  const pointer = z.object({ checkpoint: z.string().regex(/^step-\d+$/) }).safeParse(readJson(latest));
  if (!pointer.success) return damaged(`${latest} is not a checkpoint pointer`);
  const dir = join(root, pointer.data.checkpoint);
  const file = join(dir, "state.json");
  const bad = pointer.data.checkpoint;
  if (!existsSync(file)) return damaged(`${file} is missing`, bad);
  const json = readJson(file);
  if (json === undefined) return damaged(`${file} is not valid JSON (truncated?)`, bad);
  const state = CheckpointStateSchema.safeParse(json);
  if (!state.success) {
    const issues = state.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`).join("; ");
    return damaged(`${file} does not match the checkpoint schema (${issues})`, bad);
  }
  return { kind: "ok", dir, state: state.data };
}

/** The `step-NNNNNN` folders of a run's checkpoints, oldest first. */
function checkpointFolders(runDir: string): string[] {
  try {
    return readdirSync(checkpointsDir(runDir)).filter((n) => /^step-\d+$/.test(n)).sort();
  } catch {
    return [];
  }
}

/** A file's JSON, or undefined when it cannot be read or parsed. */
function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

export function policyCheckpointDir(checkpointDir: string, policy: string): string {
  return join(checkpointDir, "policies", policy);
}
