import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { type EnvironmentRuntime, openEnvironment } from "../../plugins/index.ts";
import { defineFaultCases, openOk, playClean, waitFor } from "./fault-suite.ts";
import { bundledForSuite } from "./bundled-for-suite.ts";
import { loadFixture } from "./fixture-manifest.ts";

const faulty = loadFixture("vm-faulty");

describe("isolated-vm driver: fault injection", () => {
  defineFaultCases(() => openEnvironment({ ...faulty, warm: 2, maxInstances: 4 }));
});

describe("isolated-vm driver: supervision", () => {
  const bundle = bundledForSuite(faulty, "aj-vm-test-");

  it("reuses one instance across episodes when the manifest allows it", async () => {
    const rt = await openEnvironment({ ...faulty, bundlePath: bundle(), warm: 0 });
    for (let i = 0; i < 5; i++) expect(await playClean(rt)).toBe(1);
    expect(rt.stats()).toMatchObject({ started: 1, replaced: 0, live: 1, idle: 1 });
    await rt.close();
  });

  it("starts a fresh instance per episode when the manifest says reusable: false", async () => {
    const rt = await openEnvironment({ ...loadFixture("vm-faulty", { reusable: false }), bundlePath: bundle(), warm: 0 });
    for (let i = 0; i < 3; i++) expect(await playClean(rt)).toBe(1);
    expect(rt.stats()).toMatchObject({ started: 3, replaced: 0 });
    await rt.close();
  });

  it("caps live instances: an episode past maxInstances waits for one to close", async () => {
    const rt = await openEnvironment({ ...faulty, bundlePath: bundle(), warm: 0, maxInstances: 2 });
    const a = await openOk(rt);
    const b = await openOk(rt);
    let thirdOpened = false;
    const third = rt.openEpisode().then((s) => {
      thirdOpened = true;
      return s;
    });
    await vi.waitFor(() => expect(rt.stats().waiting).toBe(1));
    expect(thirdOpened).toBe(false);
    expect(rt.stats()).toMatchObject({ live: 2, waiting: 1 });
    await a.close();
    const c = await third;
    expect(c.kind).toBe("ok");
    await b.close();
    if (c.kind === "ok") await c.value.close();
    await rt.close();
  });

  it("fills the warm pool through a cap on concurrent starts without over-starting", async () => {
    const rt = await openEnvironment({ ...faulty, bundlePath: bundle(), warm: 3, maxInstances: 6, maxConcurrentStarts: 1 });
    expect(rt.stats()).toMatchObject({ started: 3, live: 3, idle: 3 });
    await rt.close();
  });

  it("replaces a failed instance so that the pool stays warm", async () => {
    const rt = await openEnvironment({ ...faulty, bundlePath: bundle(), warm: 1 });
    const s = await openOk(rt);
    await s.reset({ task: { id: "t", split: "train", data: { fault: "memory" } }, seed: 1, builtinAgents: [] });
    await s.close();
    await waitFor(() => rt.stats().idle === 1);
    expect(rt.stats()).toMatchObject({ replaced: 1, failures: { oom: 1 } });
    expect(await playClean(rt)).toBe(1);
    await rt.close();
  });

  it("reports a bundle that never installs the protocol as start-failed", async () => {
    const broken = join(dirname(bundle()), "broken.js");
    await writeFile(broken, "throw new Error('boom at load');");
    const rt = await openEnvironment({ ...faulty, bundlePath: broken, warm: 0 });
    const s = await rt.openEpisode();
    expect(s).toMatchObject({ kind: "failed", failure: { kind: "start-failed" } });
    expect(rt.stats().failures["start-failed"]).toBe(1);
    await rt.close();
  });

  it("runs solve and generateTasks in the sandbox", async () => {
    const rt: EnvironmentRuntime = await openEnvironment({ ...faulty, bundlePath: bundle() });
    const task = { id: "t", split: "train", data: {} };
    expect(await rt.solve({ task, agent: "solver", messages: [] })).toEqual({ kind: "ok", value: "hi" });
    const g = await rt.generateTasks({ split: "gen", seed: 2, count: 2 });
    expect(g).toEqual({
      kind: "ok",
      value: [
        { id: "gen-2-0", split: "gen", data: { n: 2000 } },
        { id: "gen-2-1", split: "gen", data: { n: 2001 } },
      ],
    });
    await rt.close();
  });
});
