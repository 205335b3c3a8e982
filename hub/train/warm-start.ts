import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { PolicyRuntime } from "../../server/app/index.ts";
import type { RunConfig, WarmStartConfig } from "../../server/config/index.ts";
import { createEngine, type Engine, type FrozenModel } from "../../server/engines/index.ts";
import type { TrainSample } from "../../server/training/index.ts";
import { createRng } from "../scheduler/rng.ts";
import { policyCheckpointDir, readLatestCheckpoint } from "./checkpoint.ts";
import { collectSolverDemos, type Demonstration, readJsonlDemos, type TokenizedDemo, tokenizeDemo } from "./demonstrations.ts";
import { WarmStartError } from "./errors.ts";
import { evaluateSkill } from "./evaluate-skill.ts";
import type { RunEvent } from "./events.ts";
import type { PreparedEnvironment } from "./prepare-environments.ts";

/** An engine that can take a checkpoint's weights as its starting point (the embedded engine). */
type InitEngine = Engine & { initFrom(dir: string): Promise<void>; scoreTokens(ids: readonly number[]): Promise<number[]> };

function canInit(engine: Engine): engine is InitEngine {
  const e = engine as Partial<InitEngine>;
  return typeof e.initFrom === "function" && typeof e.scoreTokens === "function";
}

export interface StartStageOptions {
  config: RunConfig;
  runDir: string;
  projectDir: string;
  envs: readonly PreparedEnvironment[];
  policies: ReadonlyMap<string, PolicyRuntime>;
  frozen: ReadonlyMap<string, FrozenModel>;
  emit: (event: RunEvent) => void;
  log: (level: "info" | "warn", message: string) => void;
  signal?: AbortSignal;
}

/**
 * What a fresh run does before its first RL step: start from `run.init` (another run's weights), then
 * the warm-start stage (supervised steps on demonstrations), evaluating before it so the report shows
 * where the skill came from. Each policy ends at version 0 with a fresh optimizer, its KL reference the
 * warm-started weights.
 */
export async function runStartStage(o: StartStageOptions): Promise<void> {
  const { config } = o;
  const ws = config.warmStart;
  const from = startWeights(config, o.projectDir);
  if (ws?.source === "jsonl" && ws.steps > 0 && ws.path === undefined) throw new WarmStartError("warmStart.source is 'jsonl' but names no file: set warmStart.path");
  if (from !== undefined) {
    for (const [name, p] of o.policies) {
      const engine = initEngine(p.engine, name, "run.init");
      await engine.initFrom(weightsDir(from, name));
    }
    o.log("info", `policies start from ${from}`);
  }
  if (!ws || ws.source === "checkpoint" || ws.steps === 0) return;
  if (config.eval.every > 0) {
    for (const e of await evaluateSkill({ ...o, step: 0, stage: "init" })) o.emit(e);
  }
  const demos = ws.source === "jsonl" ? readJsonlDemos(resolve(o.projectDir, ws.path ?? ""), [...o.policies.keys()][0]!) : await solverDemos(o, ws);
  for (const [name, policy] of o.policies) {
    const mine = demos.filter((d) => d.policy === name);
    if (mine.length === 0) {
      o.log("warn", `warm-start: no demonstrations for policy '${name}'; it starts RL untrained`);
      continue;
    }
    if (o.signal?.aborted) return;
    await warmStartPolicy(o, ws, name, policy, mine);
    const lrWarning = rlAfterWarmStartWarning(config, name);
    if (lrWarning !== null) o.log("warn", lrWarning);
  }
}

/**
 * RL steps as large as the supervised ones undo a warm start: a scaffolded environment's training reward
 * fell from 97% to 25% in one RL step at the default lr 0.003 and held at 98% over 6 steps at 0.0003.
 * The examples use 10x below the warm-start's lr; a policy left at or above it gets a warning.
 */
export function rlAfterWarmStartWarning(config: RunConfig, policy: string): string | null {
  const ws = config.warmStart;
  const lr = config.policies[policy]?.optimizer.lr;
  if (ws === undefined || lr === undefined || lr < ws.lr) return null;
  return (
    `policies.${policy}.optimizer.lr (${lr}) is not below warmStart.lr (${ws.lr}): RL steps that large can undo the warm start ` +
    `(the examples use 10x lower, e.g. optimizer: { lr: ${Number((ws.lr / 10).toPrecision(3))} })`
  );
}

async function solverDemos(o: StartStageOptions, ws: WarmStartConfig): Promise<Demonstration[]> {
  const t0 = Date.now();
  const demos = await collectSolverDemos(o.config, o.envs, {
    split: ws.split,
    tasks: ws.tasks,
    frozen: [...o.frozen.keys()],
    // Each demonstration holds an episode instance and borrows another for `solve`: half the pool each.
    concurrency: Math.max(1, Math.floor(o.config.clients.concurrency / 2)),
  });
  o.log("info", `warm-start: ${demos.length} demonstrations from the reference solvers on '${ws.split}' (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
  return demos;
}

/**
 * The folder a fresh run's policies start from (`run.init`, or a checkpoint warm-start's `path`);
 * undefined when they start from random weights. Throws when it, or a policy's weights in it, is not
 * there. `openRun` asks before the run writes anything, so that a mistyped `--from` leaves no run
 * directory behind that would have to be removed.
 */
export function startWeights(config: RunConfig, projectDir: string): string | undefined {
  const ws = config.warmStart;
  const fromPath = ws?.source === "checkpoint" && ws.path !== undefined;
  const init = fromPath ? ws.path : config.run.init;
  // Without a path the stage would start from nothing said: a checkpoint source trained from random weights.
  if (ws?.source === "checkpoint" && init === undefined) throw new WarmStartError("warmStart.source is 'checkpoint' but names no weights: set warmStart.path (a run directory or a checkpoint folder), or run.init (--from)");
  if (init === undefined) return undefined;
  const from = resolve(projectDir, init);
  if (!existsSync(from)) throw new WarmStartError(`${fromPath ? "warmStart.path" : "run.init (--from)"} '${from}' does not exist: give a run directory, a checkpoint folder or a policy folder`);
  for (const name of Object.keys(config.policies)) weightsDir(from, name);
  return from;
}

function initEngine(engine: Engine, policy: string, what: string): InitEngine {
  if (!canInit(engine)) throw new WarmStartError(`${what}: policy '${policy}' runs on a ${engine.kind} engine, which cannot start from a checkpoint here (the embedded engine can)`);
  return engine;
}

/** A policy's weights in `from`: a policy folder, a checkpoint folder, or a run directory (its newest checkpoint). */
export function weightsDir(from: string, policy: string): string {
  if (existsSync(join(from, "embedded.json"))) return from;
  if (existsSync(join(from, "state.json"))) return heldPolicy(from, policy);
  const latest = readLatestCheckpoint(from);
  if (latest.kind === "ok") return heldPolicy(latest.dir, policy);
  throw new WarmStartError(`'${from}' is not a checkpoint: ${latest.why}`);
}

/** A checkpoint's folder of `policy`; one it does not hold is named with those it holds (the engine would only say a file is missing). */
function heldPolicy(checkpoint: string, policy: string): string {
  const dir = policyCheckpointDir(checkpoint, policy);
  if (existsSync(dir)) return dir;
  const root = join(checkpoint, "policies");
  const held = existsSync(root) ? readdirSync(root) : [];
  throw new WarmStartError(
    `checkpoint ${checkpoint} holds no policy '${policy}' (it holds ${held.map((p) => `'${p}'`).join(", ") || "none"}); to start every policy from one policy's weights, give its folder (${join(root, held[0] ?? "<policy>")})`,
  );
}

/**
 * Supervised steps on one policy's demonstrations, through the engine's own `train` (a `supervised`
 * batch, advantage 1: plain likelihood) on a separate engine at the warm-start learning rate; the run's
 * engine then starts from its weights.
 */
async function warmStartPolicy(o: StartStageOptions, ws: WarmStartConfig, name: string, policy: PolicyRuntime, demos: Demonstration[]): Promise<void> {
  const config = o.config.policies[name]!;
  initEngine(policy.engine, name, "warm-start");
  const student = await createEngine({ ...config, optimizer: { ...config.optimizer, lr: ws.lr, epochs: 1, klCoef: 0 } }, policy.tokenizer);
  const dir = join(o.runDir, "warm-start", name);
  try {
    const learner = initEngine(student, name, "warm-start");
    if (o.config.run.init !== undefined) await learner.initFrom(weightsDir(resolve(o.projectDir, o.config.run.init), name));
    const tokenized = demos.map((d) => tokenizeDemo(d, policy.tokenizer)).filter((d) => d.tokenIds.length <= learner.maxContext);
    if (tokenized.length < demos.length) o.log("warn", `warm-start: ${demos.length - tokenized.length} demonstrations longer than the context (${learner.maxContext}) are left out`);
    if (tokenized.length === 0) throw new WarmStartError(`every demonstration for '${name}' is longer than the context`);
    const rand = createRng(o.config.run.seed ^ 0x3a57);
    let order: number[] = [];
    const t0 = Date.now();
    let since = { nll: 0, tokens: 0 };
    for (let step = 1; step <= ws.steps && !o.signal?.aborted; step++) {
      const batch: TokenizedDemo[] = [];
      while (batch.length < ws.batch) {
        if (order.length === 0) order = shuffled(tokenized.length, rand);
        batch.push(tokenized[order.pop()!]!);
      }
      const samples: TrainSample[] = batch.map((d) => ({ tokenIds: d.tokenIds, lossMask: d.lossMask, logprobs: d.tokenIds.map(() => 0), advantage: 1, weight: 1 }));
      const metrics = await learner.train({ samples, supervised: true });
      since.nll += metrics.loss * metrics.tokens;
      since.tokens += metrics.tokens;
      if (step % ws.logEvery === 0 || step === ws.steps) {
        o.emit({
          type: "warm-start",
          time: new Date().toISOString(),
          policy: name,
          step,
          steps: ws.steps,
          loss: since.tokens ? since.nll / since.tokens : 0,
          demoMatch: await replayedShare(learner, batch),
          demos: tokenized.length,
          elapsedMs: Date.now() - t0,
        });
        since = { nll: 0, tokens: 0 };
      }
    }
    await learner.save(dir);
  } finally {
    await student.close();
  }
  await (policy.engine as InitEngine).initFrom(dir);
}

/** Share of `demos` whose every reply token has probability above one half under the model now (greedy replays them). */
async function replayedShare(engine: InitEngine, demos: readonly TokenizedDemo[]): Promise<number> {
  let replayed = 0;
  for (const d of demos) {
    const logprobs = await engine.scoreTokens(d.tokenIds);
    if (d.lossMask.every((m, t) => m !== 1 || t === 0 || logprobs[t]! > Math.log(0.5))) replayed += 1;
  }
  return demos.length ? replayed / demos.length : 0;
}

function shuffled(n: number, rand: () => number): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
