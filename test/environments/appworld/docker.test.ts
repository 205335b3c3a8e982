import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import type Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildAppWorldImage } from "../../../environments/appworld/build-image.ts";
import { dockerClient } from "../../../plugins/docker/docker-client.ts";
import { openEnvironment } from "../../../plugins/index.ts";
import type { EnvironmentRuntime } from "../../../plugins/runtime.ts";
import { readManifest } from "../../../hub/store/read-manifest.ts";
import { createDefaultAgentLoop, runEpisode, type Workflow } from "../../../sdk/index.ts";
import type { Task } from "../../../sdk/env/protocol.ts";
import { listenScripted, type ScriptedServer } from "../../server/helpers/build-test-server.ts";
import { describeDocker } from "../../helpers/docker.ts";
import { codeBlock, FIXTURE_DATA } from "./helpers.ts";
import { type CallRow, fromCallRows } from "../../../server/tracker/index.ts";

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../../..");
const PLUGIN = join(REPO, "environments/appworld");
const TASK: Task = { id: "5f1c0de_1", split: "train", data: {} };
const SOLUTION = codeBlock('apis.todo.add_task(title="buy oat milk", list="inbox")\napis.todo.mark_done(task_id=1)\napis.supervisor.complete_task()');
// 24 exploring turns, then the solution on the 25th (the step cap).
const REPLIES = [...Array.from({ length: 24 }, (_, i) => `${codeBlock(`print(apis.todo.show_tasks(list="inbox"))\nn${i} = ${i}`)}<|im_end|>`), `${SOLUTION}<|im_end|>`];

describeDocker("AppWorld in Docker, against the stand-in image (test double)", () => {
  let image: string;
  let project: string;

  beforeAll(async () => {
    image = await buildAppWorldImage({ variant: "stand-in" });
    project = mkdtempSync(join(tmpdir(), "aj-appworld-"));
  }, 180_000);

  afterAll(() => {
    rmSync(project, { recursive: true, force: true });
  });

  it("installs from the registry with `agentjet env add appworld --image --data --mount` and passes `agentjet env test appworld`", async () => {
    const cli = (args: string[]) => run(process.execPath, [join(REPO, "bin/agentjet.js"), ...args, "--project", project], { cwd: REPO, maxBuffer: 1 << 24 });
    const add = await cli(["env", "add", "appworld", "--image", image, "--data", FIXTURE_DATA, "--mount", `data=${FIXTURE_DATA}`, "--json"]);
    expect(JSON.parse(add.stdout.trim().split("\n").at(-1)!)).toMatchObject({ environment: { name: "appworld", kind: "docker", image, verified: "registry" } });
    const test = await cli(["env", "test", "appworld", "--json"]).catch((err: { stdout: string; stderr: string }) => err);
    const report = JSON.parse(test.stdout.trim().split("\n").at(-1)!) as { ok: boolean; report: { checks: Array<{ name: string; status: string; detail: string }> } };
    expect(report.report.checks.filter((c) => c.status !== "pass"), test.stderr).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.report.checks.map((c) => c.name)).toEqual(["manifest", "open", "tasks", "reset-step", "solve", "malformed-action", "fuzz", "determinism", "crash-recovery"]);
  }, 240_000);

  it("a container without the data mount fails to start, saying what to run", async () => {
    const runtime = await openEnvironment({ dir: PLUGIN, manifest: readManifest(PLUGIN), image, maxInstances: 1, warm: 0 });
    try {
      const opened = await runtime.openEpisode();
      expect(opened).toMatchObject({ kind: "failed", failure: { kind: "start-failed", message: expect.stringContaining("appworld download data") } });
    } finally {
      await runtime.close();
    }
  }, 60_000);

  describeDocker("episodes through the swarm server", () => {
    let server: ScriptedServer;
    let runtime: EnvironmentRuntime;

    beforeAll(async () => {
      server = await listenScripted(REPLIES);
      runtime = await openEnvironment({ dir: PLUGIN, manifest: readManifest(PLUGIN), image, mounts: { data: FIXTURE_DATA }, maxInstances: 2, warm: 1 });
    }, 120_000);

    afterAll(async () => {
      await runtime?.close();
      await server?.close();
    });

    async function play(episodeId: string, workflow: Workflow) {
      server.app.agentjet.store.register({ episodeId, taskId: TASK.id, env: "appworld", agents: { solver: { kind: "policy", target: "main" } } });
      const claim = server.app.agentjet.store.claim({ episodeId });
      if (claim.kind !== "claimed") throw new Error("no claim");
      const result = await runEpisode({
        assignment: {
          episodeId,
          env: { name: "appworld", version: "0.1.0" },
          task: TASK,
          seed: 1,
          agents: { solver: { baseUrl: server.baseUrl, apiKey: claim.keys["solver"]!, model: "main", role: "solver" } },
          builtinAgents: [],
          maxTurns: 40,
          purpose: "train",
          attempt: 0,
        },
        runtime,
        signal: new AbortController().signal,
        workflow: () => workflow,
        agreeSync: () => undefined,
      });
      if (result.type === "end") server.app.agentjet.store.end(episodeId, { rewards: result.rewards, metadata: result.info ?? {} });
      else server.app.agentjet.store.abort(episodeId, result.reason);
      // An in-process end hands the episode's calls to run.db's writer thread; wait for their commit before reading the file.
      await server.app.agentjet.store.persisted(episodeId);
      return result;
    }

    it("runs a 25-step episode end to end and records its timeline", async () => {
      const result = await play("ep-25", createDefaultAgentLoop());
      expect(result).toMatchObject({ type: "end", rewards: { solver: 1 }, info: { success: true, completed: true, steps: 25, num_tests: 4, passed: 4 } });
      const db = new Database(join(server.runDir, "run.db"), { readonly: true });
      // read back as the product reads run.db: a row leaves out what repeats its agent's previous call
      const rows = fromCallRows(db.prepare("SELECT * FROM calls WHERE episode_id = ? ORDER BY agent_id, seq").all("ep-25") as CallRow[]);
      db.close();
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i));
      const messages = rows.map((r) => r.messages as Array<{ role: string; content: string }>);
      expect(messages[0]!.map((m) => m.role)).toEqual(["system", "user"]);
      expect(messages[0]![1]!.content).toContain("buy oat milk");
      expect(messages[24]!).toHaveLength(2 + 2 * 24);
      expect(messages[1]![3]!.content).toContain('"title": "call the plumber"');
      // Each call's context extends the previous one's context plus its answer.
      const prompts = rows.map((r) => [...r.segments.flatMap((s) => [...s.ids]), ...r.headerIds]);
      for (let i = 1; i < rows.length; i++) {
        const prefix = [...prompts[i - 1]!, ...rows[i - 1]!.outputIds];
        expect(prompts[i]!.slice(0, prefix.length)).toEqual(prefix);
      }
    }, 120_000);

    it("fails an episode whose container is killed mid-episode as a crash; the next episode succeeds", async () => {
      const docker = dockerClient();
      const kill: Workflow = async (episode) => {
        const reset = await episode.env.reset();
        if (reset.kind === "failed") return episode.abort(reset.failure);
        const running = await docker.listContainers({ filters: { label: ["agentjet.env=appworld"] } });
        // Kills the episode's container and the warm spare; waits until Docker reports both stopped.
        await Promise.all(running.map((c: Docker.ContainerInfo) => docker.getContainer(c.Id).kill().catch(() => undefined)));
        await Promise.all(running.map((c: Docker.ContainerInfo) => docker.getContainer(c.Id).wait({ condition: "not-running" }).catch(() => undefined)));
        const step = await episode.env.step({ solver: SOLUTION });
        if (step.kind === "failed") return episode.abort(step.failure);
        return episode.end(step.value.rewards ?? {});
      };
      const crashed = await play("ep-killed", kill);
      expect(crashed, JSON.stringify(crashed)).toMatchObject({ type: "abort", reason: { kind: "crash" } });
      expect(server.app.agentjet.store.get("ep-killed")?.state).toBe("aborted");
      expect(runtime.stats().failures.crash).toBeGreaterThanOrEqual(1);
      // The runtime hears of the spare's death through its own exit watcher; under load that can lag the
      // kill, and an episode handed the dead spare first would (rightly) crash too. Let it hear.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const next = await play("ep-after", createDefaultAgentLoop());
      expect(next, JSON.stringify(next)).toMatchObject({ type: "end", rewards: { solver: 1 } });
    }, 120_000);
  });
});
