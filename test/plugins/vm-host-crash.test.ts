import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { openEnvironment } from "../../plugins/index.ts";
import { createVmDriver } from "../../plugins/isolated-vm/vm-driver.ts";
import type { Instance } from "../../plugins/instance.ts";
import { openOk, playClean } from "./fault-suite.ts";
import { bundledForSuite } from "./bundled-for-suite.ts";
import { loadFixture } from "./fixture-manifest.ts";

// Regression: a Map grown past the memory limit makes V8 abort on a heap OOM before isolated-vm's own
// check fires, and isolated-vm calls abort(): with isolates on worker threads that killed the whole
// process (SIGABRT). Isolates now live in child processes; only the host process dies.

// A call limit far above the time the Map needs to fill 32 MiB, so the failure cannot be a timeout.
const { limits } = loadFixture("vm-faulty").manifest;
const faulty = loadFixture("vm-faulty", { limits: { ...limits, memoryMb: 32, callTimeoutMs: 30_000 } });
const heapFault = { task: { id: "t", split: "train", data: { fault: "memory-map" } }, seed: 1, builtinAgents: [] };

/** Live vm host processes whose parent is this process, from /proc. */
async function hostProcesses(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      const [, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(ppid) !== process.pid) continue;
      if ((await readFile(`/proc/${entry}/cmdline`, "utf8")).includes("agentjet-vm-host-")) pids.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return pids;
}

function reset(instance: Instance) {
  return instance.call("reset", heapFault, faulty.manifest.limits.callTimeoutMs);
}

describe("isolated-vm driver: a fatal heap OOM in an isolate", () => {
  const bundle = bundledForSuite(faulty, "aj-vm-oom-");

  it("fails the call as oom and kills only its host process; a fresh host serves the next start", async () => {
    const driver = await createVmDriver(faulty.manifest, bundle());
    const started = await driver.start();
    if (started.kind !== "ok") throw new Error(`start failed: ${started.failure.message}`);
    const victim = started.value;
    const [host] = await hostProcesses();
    expect(host).toBeDefined();

    const r = await reset(victim);
    expect(r).toMatchObject({ kind: "failed", failure: { kind: "oom", message: expect.stringMatching(/vm host process died: V8 heap out of memory/) } });
    expect(victim.alive).toBe(false);
    expect(await victim.call("ping", {}, 1000)).toMatchObject({ kind: "failed", failure: { kind: "crash" } });
    expect(await hostProcesses()).not.toContain(host);

    const next = await driver.start();
    if (next.kind !== "ok") throw new Error(`start after the crash failed: ${next.failure.message}`);
    expect(await next.value.call("ping", {}, 5000)).toMatchObject({ kind: "ok" });
    expect(await hostProcesses()).toHaveLength(1);

    await driver.close();
    expect(await hostProcesses()).toEqual([]);
  });

  it("fails the instances of a host that was killed as crash, saying how it died", async () => {
    const driver = await createVmDriver(faulty.manifest, bundle());
    const started = await driver.start();
    if (started.kind !== "ok") throw new Error(`start failed: ${started.failure.message}`);
    const [host] = await hostProcesses();
    process.kill(host!, "SIGKILL");
    await expect.poll(() => started.value.alive).toBe(false);
    expect(await started.value.call("ping", {}, 1000)).toMatchObject({
      kind: "failed",
      failure: { kind: "crash", message: "the vm host process died (SIGKILL); its 1 instance is gone" },
    });
    const next = await driver.start();
    if (next.kind !== "ok") throw new Error(`start after the kill failed: ${next.failure.message}`);
    expect(await next.value.call("ping", {}, 5000)).toMatchObject({ kind: "ok" });
    await driver.close();
    expect(await hostProcesses()).toEqual([]);
  });

  it("counts the episode as oom, replaces the instance, and plays on", async () => {
    const rt = await openEnvironment({ ...faulty, bundlePath: bundle(), warm: 1 });
    const s = await openOk(rt);
    expect(await s.reset(heapFault)).toMatchObject({ kind: "failed", failure: { kind: "oom" } });
    await s.close();
    expect(await playClean(rt)).toBe(1);
    expect(rt.stats().failures.oom).toBe(1);
    await rt.close();
    expect(await hostProcesses()).toEqual([]);
  });
});
