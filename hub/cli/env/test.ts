import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { EXIT, parseIntFlag } from "../command.ts";
import { type ConformanceReport, runConformance } from "../../conformance/run-conformance.ts";
import { NotInstalledError } from "../../store/errors.ts";
import { MANIFEST_FILE } from "../../store/read-manifest.ts";
import { resolveInstalled } from "../../store/resolve-installed.ts";
import { type EnvIo, parse, parsePairs, PROJECT_OPTION, UsageError } from "./io.ts";

export const TEST_HELP = `agentjet env test <path|name> [options]

Runs the conformance suite on a plugin folder, or on an installed environment by name:
  manifest          the manifest is valid; the entry and dataset files exist
  open              the sandbox starts
  tasks             each split yields tasks; generated splits are reproducible from a seed
  reset-step        reset/step run sample tasks to done, with rewards in the manifest's range
  solve             the reference solve() scores the top of the reward range
  malformed-action  a malformed action gets an observation or a reward, not a crash
  fuzz              seeded random and adversarial actions (empty, huge, unicode, JSON-looking) get well-formed turns
  determinism       the same task, seed and actions give the same turns
  crash-recovery    after a forced instance failure, the instance is replaced and the next episode runs

Options:
  --tasks <n>           sample tasks per split (default: 3)
  --image <tag>         docker: test this image instead of building one
  --mount <name=path>   docker: a host folder for a named mount (repeatable)
  --project <dir>       project whose store holds <name> (default: the working directory)
  --json                print the report as JSON

Exit codes: 0 all checks passed, 1 a check failed, 2 usage, 3 no such folder or installed environment.`;

export interface TestEnvironmentOptions {
  /** Sample tasks per split (default: 3). */
  tasks?: number;
  /** docker: test this image instead of building one. */
  image?: string;
  /** docker: host folders for named mounts. */
  mounts?: Record<string, string>;
  /** The project whose store holds an installed `target` (default: the working directory). */
  project?: string;
  /** Each check's line as it finishes. */
  onCheck: (line: string) => void;
  /** What is tested, when `target` is an installed environment. */
  onNote: (line: string) => void;
}

/** The conformance report of a plugin folder, or of an installed environment by name (`env test`, and the MCP tool `env_test`). */
export async function testEnvironment(target: string, o: TestEnvironmentOptions): Promise<ConformanceReport> {
  const mounts = o.mounts ?? {};
  const common = { ...(o.tasks ? { tasksPerSplit: o.tasks } : {}), onProgress: o.onCheck };
  if (existsSync(join(resolve(target), MANIFEST_FILE))) {
    return runConformance({ dir: resolve(target), ...(o.image ? { image: o.image } : {}), ...(Object.keys(mounts).length ? { mounts } : {}), ...common });
  }
  const installed = resolveInstalled(target, undefined, o.project ? { projectDir: o.project } : {});
  if (!installed) throw new NotInstalledError(`'${target}' is neither a plugin folder (no ${MANIFEST_FILE}) nor an installed environment`);
  o.onNote(`testing installed ${installed.name}@${installed.version} (${installed.dir})`);
  return runConformance({
    dir: installed.dir,
    dataDir: installed.dataDir,
    ...(installed.bundlePath ? { bundlePath: installed.bundlePath } : {}),
    ...(o.image || installed.image ? { image: o.image ?? installed.image } : {}),
    ...(Object.keys(mounts).length || installed.mounts ? { mounts: { ...installed.mounts, ...mounts } } : {}),
    ...common,
  });
}

export async function runTest(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTION, tasks: { type: "string" }, image: { type: "string" }, mount: { type: "string", multiple: true } });
  const [target, ...extra] = positionals;
  if (!target || extra.length) throw new UsageError("usage: agentjet env test <path|name>");
  const tasksFlag = values.tasks === undefined ? undefined : parseIntFlag("tasks", values.tasks, 1);
  if (tasksFlag?.ok === false) throw new UsageError(tasksFlag.message);
  const tasks = tasksFlag?.value;
  // The check lines are the report: on stdout in text mode, in order before the summary (a pipe keeps
  // them together); with --json they are progress on stderr and stdout holds the one JSON object.
  const report = await testEnvironment(target, {
    ...(tasks ? { tasks } : {}),
    ...(values.image ? { image: values.image } : {}),
    mounts: parsePairs(values.mount, "--mount"),
    ...(values.project ? { project: values.project } : {}),
    onCheck: io.json ? io.progress : (line: string) => process.stdout.write(`${line}\n`),
    onNote: io.progress,
  });
  const failed = report.checks.filter((c) => c.status === "fail").length;
  const label = report.version ? `${report.name}@${report.version}` : report.name;
  const text = `${label}: ${report.passed ? "passed" : "FAILED"} (${report.checks.filter((c) => c.status === "pass").length} passed, ${failed} failed, ${report.checks.filter((c) => c.status === "skip").length} skipped)`;
  if (io.json) process.stdout.write(`${JSON.stringify({ ok: report.passed, report })}\n`);
  else process.stdout.write(`${text}\n`);
  return report.passed ? EXIT.ok : EXIT.failure;
}
