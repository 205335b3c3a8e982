import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Manifest, Task } from "../../sdk/env/index.ts";
import { type EnvironmentRuntime, openEnvironment } from "../../plugins/index.ts";
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

type RecordCheck = (name: CheckResult["name"], status: CheckStatus, detail: string) => void;

/** Collects the checks (each timed from the previous one, and logged) and makes the report. */
function createReport(dir: string, log: (line: string) => void): { record: RecordCheck; finish: (manifest?: Manifest) => ConformanceReport } {
  const checks: CheckResult[] = [];
  let t0 = performance.now();
  const record: RecordCheck = (name, status, detail) => {
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
  return { record, finish };
}

/** The manifest reads and validates, and the files it names exist (`manifest` is absent when it does not read). */
function checkManifest(dir: string, opts: RunConformanceOptions): { manifest: Manifest | undefined; status: CheckStatus; detail: string } {
  let manifest: Manifest;
  try {
    manifest = readManifest(dir);
  } catch (cause) {
    return { manifest: undefined, status: "fail", detail: (cause as Error).message };
  }
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
  if (problems.length) return { manifest, status: "fail", detail: problems.join("; ") };
  return {
    manifest,
    status: "pass",
    detail: `${manifest.name}@${manifest.version} (${manifest.kind}), ${manifest.agents.length} agent(s), splits ${Object.keys(manifest.splits).join(", ")}`,
  };
}

function openForTest(dir: string, manifest: Manifest, opts: RunConformanceOptions): Promise<EnvironmentRuntime> {
  return openEnvironment({
    dir,
    manifest,
    ...(opts.bundlePath ? { bundlePath: opts.bundlePath } : {}),
    ...(opts.image ? { image: opts.image } : {}),
    ...(opts.mounts ? { mounts: opts.mounts } : {}),
    ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
    maxInstances: 2,
    warm: 1,
  });
}

/** A source folder's image was built for this test only: leave no image behind. */
async function removeTestImage(manifest: Manifest, opts: RunConformanceOptions): Promise<void> {
  if (manifest.kind === "docker" && !opts.image && !manifest.docker?.image) await removeImage(sourceImageTag(manifest.name, manifest.version));
}

/** Sample tasks of every split it can read; a generated split must give the same tasks for the same seed. Throws what is wrong. */
async function sampleReproducibleTasks(runtime: EnvironmentRuntime, manifest: Manifest, perSplit: number, withData: boolean): Promise<{ tasks: Task[]; detail: string }> {
  const tasks = await sampleTasks(runtime, manifest, perSplit, withData);
  const generated = Object.entries(manifest.splits).filter(([, s]) => "generate" in s);
  for (const [split] of generated) {
    const a = await runtime.listTasks(split, { seed: SEED });
    const b = await runtime.listTasks(split, { seed: SEED });
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`split ${split}: the same seed generated different tasks`);
  }
  if (tasks.length === 0) throw new Error("no sample tasks in any split");
  return { tasks, detail: `${tasks.length} sample task(s)${generated.length ? "; generated splits are reproducible from a seed" : ""}` };
}

/** The reference agent: the plugin's `solve()` when it has one (probed on `probe`), else empty actions. */
async function referenceAgent(runtime: EnvironmentRuntime, probe: Task, played: string): Promise<{ hasSolve: boolean; act: ActionPolicy }> {
  const probeSolve = await runtime.solve({ task: probe, agent: played, messages: [] });
  const hasSolve = !(probeSolve.kind === "failed" && /solve/i.test(probeSolve.failure.message));
  const solver: ActionPolicy = async (agent, task, history) => {
    const r = await runtime.solve({ task, agent, messages: history });
    return r.kind === "ok" ? r.value : "";
  };
  return { hasSolve, act: hasSolve ? solver : async () => "" };
}

function outOfRange(rewards: Record<string, number>, manifest: Manifest): boolean {
  return Object.values(rewards).some((r) => r < manifest.reward.min || r > manifest.reward.max);
}

/** Every sample episode ran to done with rewards in the declared range. */
function checkResetStep(episodes: EpisodeResult[], tasks: Task[], manifest: Manifest): [CheckStatus, string] {
  const bad = episodes.map((e, i) => ({ e, task: tasks[i] as Task })).filter(({ e }) => e.kind !== "done" || outOfRange(e.rewards, manifest));
  if (bad.length) return ["fail", bad.map(({ e, task }) => `task ${task.id}: ${describeEpisode(e)}`).join("; ")];
  return ["pass", `${episodes.length} episode(s) ran to done with rewards in [${manifest.reward.min}, ${manifest.reward.max}]`];
}

/** The reference solve() reaches the top reward: on every task alone, on at least one against built-in players. */
function checkSolve(episodes: EpisodeResult[], manifest: Manifest, played: string, builtin: string[], hasSolve: boolean): [CheckStatus, string] {
  if (!hasSolve) {
    return ["skip", "the plugin defines no reference solve(), so reaching the top reward is not checked (fine for games no fixed strategy can always win)"];
  }
  const top = episodes.map((e) => (e.kind === "done" ? e.rewards[played] : undefined));
  const hits = top.filter((r) => r === manifest.reward.max).length;
  const needed = builtin.length ? 1 : top.length;
  if (hits >= needed) return ["pass", `the reference agent scored ${manifest.reward.max} on ${hits}/${top.length} task(s)`];
  return ["fail", `the reference agent scored ${JSON.stringify(top)}, expected ${manifest.reward.max}${builtin.length ? " on at least one task" : " on every task"}`];
}

/** A malformed first action is answered with a well-formed turn, not a broken instance. */
async function checkMalformedAction(runtime: EnvironmentRuntime, manifest: Manifest, probe: Task, builtin: string[], maxSteps: number): Promise<[CheckStatus, string]> {
  let calls = 0;
  const malformed = await playEpisode({ runtime, task: probe, seed: SEED, builtinAgents: builtin, act: async () => (calls++ === 0 ? MALFORMED : ""), maxSteps });
  if (malformed.kind === "failed" && malformed.during === "step" && (malformed.failure.kind === "timeout" || malformed.failure.kind === "oom")) {
    return ["fail", `a malformed action hit a limit (${malformed.failure.kind}): ${malformed.failure.message}`];
  }
  if (malformed.kind === "failed" && malformed.during === "step") {
    return ["fail", `a malformed action broke the instance (${malformed.failure.kind}): ${malformed.failure.message}; answer it with an observation or a reward instead`];
  }
  if (malformed.kind === "failed") return ["fail", describeEpisode(malformed)];
  if (malformed.kind === "done" && outOfRange(malformed.rewards, manifest)) return ["fail", `reward out of range: ${describeEpisode(malformed)}`];
  return ["pass", `answered cleanly (${malformed.kind === "done" ? describeEpisode(malformed) : "episode continues"})`];
}

/** The same task, seed and actions give the same turns twice. */
async function checkDeterminism(runtime: EnvironmentRuntime, probe: Task, builtin: string[], act: ActionPolicy, maxSteps: number): Promise<[CheckStatus, string]> {
  const first = await playEpisode({ runtime, task: probe, seed: SEED, builtinAgents: builtin, act, maxSteps });
  const second = await playEpisode({ runtime, task: probe, seed: SEED, builtinAgents: builtin, act, maxSteps });
  if (first.kind === "failed" || second.kind === "failed") return ["fail", describeEpisode(first.kind === "failed" ? first : second)];
  if (JSON.stringify(first.turns) !== JSON.stringify(second.turns)) {
    const at = first.turns.findIndex((t, i) => JSON.stringify(t) !== JSON.stringify(second.turns[i]));
    return ["fail", `the same task, seed and actions gave different turns (first difference at turn ${at})`];
  }
  return ["pass", `two runs with seed ${SEED} gave identical turns (${first.turns.length})`];
}

/** The checks that run episodes in the open sandbox, in order; without sample tasks the rest cannot run. */
async function runEpisodeChecks(runtime: EnvironmentRuntime, manifest: Manifest, opts: RunConformanceOptions, record: RecordCheck): Promise<void> {
  const maxSteps = opts.maxSteps ?? 200;
  let tasks: Task[];
  try {
    const sampled = await sampleReproducibleTasks(runtime, manifest, opts.tasksPerSplit ?? 3, !!opts.dataDir);
    tasks = sampled.tasks;
    record("tasks", "pass", sampled.detail);
  } catch (cause) {
    record("tasks", "fail", (cause as Error).message);
    return;
  }

  const { played, builtin } = seats(manifest);
  const probe = tasks[0] as Task;
  const { hasSolve, act } = await referenceAgent(runtime, probe, played);
  const episodes: EpisodeResult[] = [];
  for (const task of tasks) episodes.push(await playEpisode({ runtime, task, seed: SEED, builtinAgents: builtin, act, maxSteps }));
  record("reset-step", ...checkResetStep(episodes, tasks, manifest));
  record("solve", ...checkSolve(episodes, manifest, played, builtin, hasSolve));
  record("malformed-action", ...(await checkMalformedAction(runtime, manifest, probe, builtin, maxSteps)));
  record("fuzz", ...(await checkFuzz(runtime, manifest, tasks, builtin)));
  record("determinism", ...(await checkDeterminism(runtime, probe, builtin, act, maxSteps)));
  record("crash-recovery", ...(await checkCrashRecovery(runtime, manifest, probe, builtin, act, maxSteps)));
}

/**
 * `agentjet env test`: the conformance suite every plugin must pass. Checks run in order; one that cannot
 * run because an earlier one failed is a skip with the reason.
 */
export async function runConformance(opts: RunConformanceOptions): Promise<ConformanceReport> {
  const dir = resolve(opts.dir);
  const { record, finish } = createReport(dir, opts.onProgress ?? (() => {}));

  const { manifest, status, detail } = checkManifest(dir, opts);
  record("manifest", status, detail);
  if (!manifest || status === "fail") return finish(manifest);

  let runtime: EnvironmentRuntime;
  try {
    runtime = await openForTest(dir, manifest, opts);
    record("open", "pass", `${manifest.kind} sandbox started`);
  } catch (cause) {
    record("open", "fail", (cause as Error).message);
    await removeTestImage(manifest, opts);
    return finish(manifest);
  }

  try {
    await runEpisodeChecks(runtime, manifest, opts, record);
  } finally {
    await runtime.close();
    await removeTestImage(manifest, opts);
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
