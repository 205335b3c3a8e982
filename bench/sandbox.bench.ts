import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { buildDockerImage, dockerAvailable, type EnvironmentRuntime, openEnvironment } from "../plugins/index.ts";
import type { Manifest } from "../sdk/env/index.ts";
import { ManifestSchema } from "../sdk/env/schemas.ts";
import { dockerStartTables } from "./docker-start.ts";
import { type Bench, type BenchTable, fmt, quantile } from "./harness.ts";

/** Cold and warm instance start and steps per second, isolated-vm and Docker side by side. */

const FIXTURES = join(import.meta.dirname, "..", "test", "plugins", "fixtures");
const IMAGE = "agentjet-test/docker-faulty:latest";
const task = { id: "t", split: "train", data: {} };

function fixture(name: string, override: Partial<Manifest> = {}) {
  const dir = join(FIXTURES, name);
  const raw = JSON.parse(readFileSync(join(dir, "agentjet.env.json"), "utf8")) as Record<string, unknown>;
  return { dir, manifest: ManifestSchema.parse({ ...raw, ...override }) };
}

interface Measured {
  cold: number[];
  warm: number[];
  stepsPerSecond: number;
}

/** Cold: an episode opened with no idle instance (a start). Warm: an episode opened on a reused idle instance. */
async function measure(open: (reusable: boolean) => Promise<EnvironmentRuntime>, n: { cold: number; warm: number; steps: number }): Promise<Measured> {
  const coldRt = await open(false);
  const cold: number[] = [];
  for (let i = 0; i < n.cold + 1; i++) {
    const t = performance.now();
    const s = await coldRt.openEpisode();
    const ms = performance.now() - t;
    if (s.kind !== "ok") throw new Error(`cold start failed: ${s.failure.message}`);
    if (i > 0) cold.push(ms);
    await s.value.close();
  }
  await coldRt.close();

  const warmRt = await open(true);
  const warm: number[] = [];
  let stepsPerSecond = 0;
  for (let i = 0; i < n.warm + 3; i++) {
    const t = performance.now();
    const s = await warmRt.openEpisode();
    const ms = performance.now() - t;
    if (s.kind !== "ok") throw new Error(`warm acquire failed: ${s.failure.message}`);
    if (i >= 3) warm.push(ms);
    if (i === 0) {
      await s.value.reset({ task, seed: 1, builtinAgents: [] });
      const t0 = performance.now();
      for (let k = 0; k < n.steps; k++) {
        const r = await s.value.step({ actions: { solver: "x" } });
        if (r.kind !== "ok") throw new Error(`step failed: ${r.failure.message}`);
      }
      stepsPerSecond = n.steps / ((performance.now() - t0) / 1000);
    }
    await s.value.close();
  }
  await warmRt.close();
  return { cold, warm, stepsPerSecond };
}

function row(name: string, m: Measured): Array<string | number> {
  return [name, fmt(quantile(m.cold, 0.5)), fmt(quantile(m.cold, 0.95)), fmt(quantile(m.warm, 0.5)), fmt(quantile(m.warm, 0.95)), fmt(m.stepsPerSecond)];
}

export const bench: Bench = {
  name: "sandbox",
  async run({ quick, log }) {
    const vm = fixture("vm-faulty");
    log("isolated-vm");
    const vmResult = await measure(
      (reusable) => openEnvironment({ ...vm, manifest: { ...vm.manifest, reusable }, warm: reusable ? 1 : 0 }),
      quick ? { cold: 20, warm: 50, steps: 200 } : { cold: 100, warm: 500, steps: 2000 },
    );
    const rows = [row("isolated-vm", vmResult)];
    const extra: BenchTable[] = [];
    const notes = [
      `isolated-vm cold p50 ${fmt(quantile(vmResult.cold, 0.5))} ms (target < 5): ${quantile(vmResult.cold, 0.5) < 5 ? "met" : "missed"}`,
      `isolated-vm warm p50 ${fmt(quantile(vmResult.warm, 0.5))} ms (target < 0.5): ${quantile(vmResult.warm, 0.5) < 0.5 ? "met" : "missed"}`,
    ];
    if (await dockerAvailable()) {
      // The default: each instance its own network namespace (the fixture opts into sharing for the fault tests).
      const shared = fixture("docker-faulty");
      const docker = { ...shared, manifest: { ...shared.manifest, docker: { ...shared.manifest.docker!, sharedLoopback: false } } };
      log("docker: building the fixture image");
      await buildDockerImage({ ...docker, tag: IMAGE });
      log("docker");
      const dockerResult = await measure(
        (reusable) =>
          openEnvironment({ ...docker, manifest: { ...docker.manifest, reusable }, image: IMAGE, warm: reusable ? 1 : 0 }),
        quick ? { cold: 5, warm: 30, steps: 100 } : { cold: 20, warm: 200, steps: 1000 },
      );
      rows.push(row("docker", dockerResult));
      extra.push(...(await dockerStartTables(docker, IMAGE, quick, log)));
      notes.push(
        `docker cold p50 ${fmt(quantile(dockerResult.cold, 0.5))} ms (target < 250): ${quantile(dockerResult.cold, 0.5) < 250 ? "met" : "missed"}; p95 ${fmt(quantile(dockerResult.cold, 0.95))} ms (target < 500): ${quantile(dockerResult.cold, 0.95) < 500 ? "met" : "missed"}`,
        `docker warm p50 ${fmt(quantile(dockerResult.warm, 0.5))} ms (target < 50): ${quantile(dockerResult.warm, 0.5) < 50 ? "met" : "missed"}`,
      );
    } else {
      notes.push("docker: SKIPPED, no Docker engine answers");
    }
    notes.push(
      `machine: ${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end (other work shares these CPUs)`,
      "cold: openEpisode with no idle instance (a start: isolate + context + bundle, or container create + attach + start + first ping); warm: openEpisode on an idle reused instance",
    );
    const table: BenchTable = {
      title: "Instance start (ms) and steps per second",
      columns: ["driver", "cold p50", "cold p95", "warm p50", "warm p95", "steps/s"],
      rows,
      notes,
    };
    return [table, ...extra];
  },
};
