import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Manifest } from "../../sdk/env/manifest.ts";
import type { Task } from "../../sdk/env/protocol.ts";
import { openEnvironment } from "../../plugins/index.ts";
import type { EnvironmentRuntime } from "../../plugins/runtime.ts";
import { readManifest } from "../store/read-manifest.ts";
import { removeImage, sourceImageTag } from "../store/remove-image.ts";
import { ADVERSARIAL_COUNT, createFuzzActions } from "./fuzz-actions.ts";
import { type ActionPolicy, type EpisodeResult, playEpisode } from "./play-episode.ts";

export type CheckStatus = "pass" | "fail" | "skip";

export interface CheckResult {
  name: "manifest" | "open" | "tasks" | "reset-step" | "solve" | "malformed-action" | "fuzz" | "determinism" | "crash-recovery";
  status: CheckStatus;
  detail: string;
  seconds: number;
}

export interface ConformanceReport {
  name: string;
  version: string;
  kind: "vm" | "docker";
  /** True when no check failed (skips do not fail the suite). */
  passed: boolean;
  checks: CheckResult[];
}

export interface RunConformanceOptions {
  /** The plugin folder (a source folder, or an installed one). */
  dir: string;
  /** vm: a prebuilt bundle; docker: a built image; data: the installed store's data folder. */
  bundlePath?: string;
  image?: string;
  mounts?: Record<string, string>;
  dataDir?: string;
  /** Sample tasks per split (default: 3). */
  tasksPerSplit?: number;
  /** Steps before an episode counts as unfinished (default: 200). */
  maxSteps?: number;
  onProgress?: (line: string) => void;
}

const MALFORMED = "\u0000}{ <<not an answer>> \\boxed{ \uD83D\uDE43 ".repeat(4);
const SEED = 7;

function describeEpisode(r: EpisodeResult): string {
  if (r.kind === "failed") return `${r.during} failed (${r.failure.kind}): ${r.failure.message}`;
  if (r.kind === "unfinished") return `not done after ${r.turns.length - 1} steps`;
  return `rewards ${JSON.stringify(r.rewards)}`;
}

/** The agents the reference agent plays; the others are the environment's built-in players. */
function seats(manifest: Manifest): { played: string; builtin: string[] } {
  const [first, ...rest] = manifest.agents.map((a) => a.id);
  return { played: first ?? "", builtin: rest };
}

async function sampleTasks(runtime: EnvironmentRuntime, manifest: Manifest, perSplit: number, withData: boolean): Promise<Task[]> {
  const tasks: Task[] = [];
  for (const [split, spec] of Object.entries(manifest.splits)) {
    if ("external" in spec && !withData) continue;
    tasks.push(...(await runtime.listTasks(split, { seed: SEED })).slice(0, perSplit));
  }
  return tasks;
}

/**
 * `agentjet env test`: the conformance suite every plugin must pass. Checks run in order; one that cannot
 * run because an earlier one failed is a skip with the reason.
 */
export async function runConformance(opts: RunConformanceOptions): Promise<ConformanceReport> {
  const dir = resolve(opts.dir);
  const log = opts.onProgress ?? (() => {});
  const perSplit = opts.tasksPerSplit ?? 3;
  const maxSteps = opts.maxSteps ?? 200;
  const checks: CheckResult[] = [];
  let t0 = performance.now();
  const record = (name: CheckResult["name"], status: CheckStatus, detail: string): void => {
    const seconds = Math.round(performance.now() - t0) / 1000;
    checks.push({ name, status, detail, seconds });
    log(`${status === "pass" ? "ok  " : status === "fail" ? "FAIL" : "skip"} ${name}: ${detail}`);
    t0 = performance.now();
  };
  const finish = (manifest?: Manifest): ConformanceReport => ({
    // Without a valid manifest, the folder names the report.
    name: manifest?.name ?? basename(dir),
    version: manifest?.version ?? "",
    kind: manifest?.kind ?? "vm",
    passed: checks.every((c) => c.status !== "fail"),
    checks,
  });

  let manifest: Manifest;
  try {
    manifest = readManifest(dir);
    const problems: string[] = [];
    if (!existsSync(join(dir, manifest.entry))) problems.push(`entry ${manifest.entry} does not exist`);
    for (const [split, spec] of Object.entries(manifest.splits)) {
      if (!("file" in spec) || manifest.prepare) continue;
      const here = [opts.dataDir, dir].filter((d): d is string => !!d).some((d) => existsSync(resolve(d, spec.file)));
      if (!here) problems.push(`split ${split}: ${spec.file} does not exist`);
    }
    if (manifest.kind === "docker" && !manifest.docker?.image && !opts.image && !existsSync(join(dir, manifest.docker?.dockerfile ?? "Dockerfile"))) {
      problems.push("kind docker needs a Dockerfile (or docker.image)");
    }
    if (problems.length) {
      record("manifest", "fail", problems.join("; "));
      return finish(manifest);
    }
    record("manifest", "pass", `${manifest.name}@${manifest.version} (${manifest.kind}), ${manifest.agents.length} agent(s), splits ${Object.keys(manifest.splits).join(", ")}`);
  } catch (cause) {
    record("manifest", "fail", (cause as Error).message);
    return finish();
  }

  let runtime: EnvironmentRuntime;
  try {
    runtime = await openEnvironment({
      dir,
      manifest,
      ...(opts.bundlePath ? { bundlePath: opts.bundlePath } : {}),
      ...(opts.image ? { image: opts.image } : {}),
      ...(opts.mounts ? { mounts: opts.mounts } : {}),
      ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
      maxInstances: 2,
      warm: 1,
    });
    record("open", "pass", `${manifest.kind} sandbox started`);
  } catch (cause) {
    record("open", "fail", (cause as Error).message);
    if (manifest.kind === "docker" && !opts.image && !manifest.docker?.image) await removeImage(sourceImageTag(manifest.name, manifest.version));
    return finish(manifest);
  }

  try {
    let tasks: Task[];
    try {
      tasks = await sampleTasks(runtime, manifest, perSplit, !!opts.dataDir);
      const generated = Object.entries(manifest.splits).filter(([, s]) => "generate" in s);
      for (const [split] of generated) {
        const a = await runtime.listTasks(split, { seed: SEED });
        const b = await runtime.listTasks(split, { seed: SEED });
        if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`split ${split}: the same seed generated different tasks`);
      }
      if (tasks.length === 0) throw new Error("no sample tasks in any split");
      record("tasks", "pass", `${tasks.length} sample task(s)${generated.length ? "; generated splits are reproducible from a seed" : ""}`);
    } catch (cause) {
      record("tasks", "fail", (cause as Error).message);
      return finish(manifest);
    }

    const { played, builtin } = seats(manifest);
    const probe = tasks[0] as Task;
    const probeSolve = await runtime.solve({ task: probe, agent: played, messages: [] });
    const hasSolve = !(probeSolve.kind === "failed" && /solve/i.test(probeSolve.failure.message));
    const solver: ActionPolicy = async (agent, task, history) => {
      const r = await runtime.solve({ task, agent, messages: history });
      return r.kind === "ok" ? r.value : "";
    };
    const act: ActionPolicy = hasSolve ? solver : async () => "";

    const episodes: EpisodeResult[] = [];
    for (const task of tasks) episodes.push(await playEpisode({ runtime, task, seed: SEED, builtinAgents: builtin, act, maxSteps }));
    const bad = episodes.map((e, i) => ({ e, task: tasks[i] as Task })).filter(({ e }) => e.kind !== "done" || Object.values(e.rewards).some((r) => r < manifest.reward.min || r > manifest.reward.max));
    if (bad.length) record("reset-step", "fail", bad.map(({ e, task }) => `task ${task.id}: ${describeEpisode(e)}`).join("; "));
    else record("reset-step", "pass", `${episodes.length} episode(s) ran to done with rewards in [${manifest.reward.min}, ${manifest.reward.max}]`);

    if (!hasSolve) {
      record("solve", "skip", "the plugin defines no reference solve(), so reaching the top reward is not checked (fine for games no fixed strategy can always win)");
    } else {
      const top = episodes.map((e) => (e.kind === "done" ? e.rewards[played] : undefined));
      const hits = top.filter((r) => r === manifest.reward.max).length;
      const needed = builtin.length ? 1 : top.length;
      if (hits >= needed) record("solve", "pass", `the reference agent scored ${manifest.reward.max} on ${hits}/${top.length} task(s)`);
      else record("solve", "fail", `the reference agent scored ${JSON.stringify(top)}, expected ${manifest.reward.max}${builtin.length ? " on at least one task" : " on every task"}`);
    }

    let calls = 0;
    const malformed = await playEpisode({ runtime, task: probe, seed: SEED, builtinAgents: builtin, act: async () => (calls++ === 0 ? MALFORMED : ""), maxSteps });
    if (malformed.kind === "failed" && malformed.during === "step" && (malformed.failure.kind === "timeout" || malformed.failure.kind === "oom")) {
      record("malformed-action", "fail", `a malformed action hit a limit (${malformed.failure.kind}): ${malformed.failure.message}`);
    } else if (malformed.kind === "failed" && malformed.during === "step") {
      record("malformed-action", "fail", `a malformed action broke the instance (${malformed.failure.kind}): ${malformed.failure.message}; answer it with an observation or a reward instead`);
    } else if (malformed.kind === "failed") record("malformed-action", "fail", describeEpisode(malformed));
    else if (malformed.kind === "done" && Object.values(malformed.rewards).some((r) => r < manifest.reward.min || r > manifest.reward.max)) {
      record("malformed-action", "fail", `reward out of range: ${describeEpisode(malformed)}`);
    } else record("malformed-action", "pass", `answered cleanly (${malformed.kind === "done" ? describeEpisode(malformed) : "episode continues"})`);

    record("fuzz", ...(await checkFuzz(runtime, manifest, tasks, builtin)));

    const first = await playEpisode({ runtime, task: probe, seed: SEED, builtinAgents: builtin, act, maxSteps });
    const second = await playEpisode({ runtime, task: probe, seed: SEED, builtinAgents: builtin, act, maxSteps });
    if (first.kind === "failed" || second.kind === "failed") record("determinism", "fail", describeEpisode(first.kind === "failed" ? first : second));
    else if (JSON.stringify(first.turns) !== JSON.stringify(second.turns)) {
      const at = first.turns.findIndex((t, i) => JSON.stringify(t) !== JSON.stringify(second.turns[i]));
      record("determinism", "fail", `the same task, seed and actions gave different turns (first difference at turn ${at})`);
    } else record("determinism", "pass", `two runs with seed ${SEED} gave identical turns (${first.turns.length})`);

    record("crash-recovery", ...(await checkCrashRecovery(runtime, manifest, probe, builtin, act, maxSteps)));
  } finally {
    await runtime.close();
    // A source folder's image was built for this test only: leave no image behind.
    if (manifest.kind === "docker" && !opts.image && !manifest.docker?.image) await removeImage(sourceImageTag(manifest.name, manifest.version));
  }
  return finish(manifest);
}

const FUZZ_EPISODES = 3;
const FUZZ_STEPS = 20;

/**
 * Plays a few episodes whose every action is adversarial or seeded random text, so an action path the
 * reference agent never takes (one that shells out, parses JSON, indexes by the action) is exercised.
 * Every turn must be well formed (the runtime validates each against the protocol and the reward range);
 * an episode may stay unfinished.
 */
async function checkFuzz(runtime: EnvironmentRuntime, manifest: Manifest, tasks: Task[], builtin: string[]): Promise<[CheckStatus, string]> {
  const next = createFuzzActions(SEED);
  let steps = 0;
  let finished = 0;
  // At least FUZZ_EPISODES episodes, and enough for every adversarial action to be sent once (one-step episodes take one each).
  let episodes = 0;
  for (let e = 0; e < FUZZ_EPISODES || (steps < ADVERSARIAL_COUNT && e < ADVERSARIAL_COUNT + FUZZ_EPISODES); e++) {
    episodes++;
    const task = tasks[e % tasks.length] as Task;
    let last = "";
    const r = await playEpisode({ runtime, task, seed: SEED + e, builtinAgents: builtin, act: async () => ((last = next()), steps++, last), maxSteps: FUZZ_STEPS });
    if (r.kind === "failed") {
      const shown = last.length > 60 ? `${JSON.stringify(last.slice(0, 60))}… (${last.length} chars)` : JSON.stringify(last);
      const advice = r.failure.kind === "timeout" || r.failure.kind === "oom" ? "" : `; answer every action with a well-formed turn (an observation, or done with rewards in [${manifest.reward.min}, ${manifest.reward.max}])`;
      return ["fail", `task ${task.id}, after the action ${shown}: ${describeEpisode(r)}${advice}`];
    }
    if (r.kind === "done") finished++;
  }
  return ["pass", `${steps} action(s) over ${episodes} episodes (${Math.min(steps, ADVERSARIAL_COUNT)} adversarial, the rest seeded random), every turn well formed; ${finished} finished`];
}

/**
 * Forces an instance failure with an action larger than the instance's memory cap, then checks that the
 * failure stays in its episode, the instance is replaced, and the next episode runs.
 */
async function checkCrashRecovery(
  runtime: EnvironmentRuntime,
  manifest: Manifest,
  task: Task,
  builtin: string[],
  act: ActionPolicy,
  maxSteps: number,
): Promise<[CheckStatus, string]> {
  const before = runtime.stats();
  const bomb = "x".repeat(Math.min(manifest.limits.memoryMb + 16, 400) * 1024 * 1024);
  let sent = false;
  const crashed = await playEpisode({ runtime, task, seed: SEED, builtinAgents: builtin, act: async () => (sent ? "" : ((sent = true), bomb)), maxSteps: 1 });
  const after = runtime.stats();
  const next = await playEpisode({ runtime, task, seed: SEED, builtinAgents: builtin, act, maxSteps });
  if (next.kind !== "done") return ["fail", `the episode after a forced failure did not run: ${describeEpisode(next)}`];
  if (crashed.kind !== "failed") return ["pass", `an oversized action (${bomb.length >> 20} MiB) was answered cleanly; the next episode ran`];
  if (after.replaced <= before.replaced) return ["fail", `the instance failed (${crashed.failure.kind}) but the supervisor did not replace it`];
  return ["pass", `forced ${crashed.failure.kind} (${bomb.length >> 20} MiB action) failed only its episode; the instance was replaced and the next episode ran`];
}
