import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EnvironmentRuntime, bundleVmPlugin, openEnvironment } from "../../plugins/index.ts";
import { openOk } from "./fault-suite.ts";
import { loadFixture } from "./fixture-manifest.ts";

describe("isolated-vm driver: escapes", () => {
  let rt: EnvironmentRuntime;
  beforeAll(async () => {
    rt = await openEnvironment({ ...loadFixture("vm-faulty"), warm: 1 });
  });
  afterAll(async () => {
    await rt.close();
  });

  async function probe(name: string): Promise<unknown> {
    const s = await openOk(rt);
    await s.reset({ task: { id: "t", split: "train", data: {} }, seed: 1, builtinAgents: [] });
    const r = await s.step({ actions: { solver: `probe:${name}` } });
    await s.close();
    if (r.kind !== "ok") throw new Error(`probe ${name} failed: ${r.failure.message}`);
    return r.value.info?.probe;
  }

  it("sees no process, require, module, fetch, sockets or timers", async () => {
    const globals = (await probe("globals")) as Record<string, string>;
    for (const name of ["process", "require", "module", "fetch", "XMLHttpRequest", "WebSocket", "setTimeout"]) {
      expect(globals[name], name).toBe("undefined");
    }
  });

  it("cannot import node:fs (or anything) at run time", async () => {
    expect(await probe("dynamic-import")).toMatch(/^threw/);
  });

  it("finds no host objects through the Function constructor", async () => {
    expect(await probe("function-constructor")).toBe("ran: undefined");
    expect(await probe("constructor-escape")).toBe("ran: undefined");
  });

  it("refuses to bundle a plugin that imports a node builtin, naming it", async () => {
    const { dir, manifest } = loadFixture("vm-uses-fs");
    const err = await bundleVmPlugin(dir, manifest, "/nonexistent/never-written.js").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_PLUGIN_BUNDLE_BUILTIN" });
    expect((err as Error).message).toContain('"node:fs"');
    expect((err as Error).message).toContain("index.ts");
  });

  it("fails a bundle whose entry does not export environment", async () => {
    const { dir, manifest } = loadFixture("vm-faulty", { entry: "../faulty-core.ts" });
    const err = await bundleVmPlugin(dir, manifest, "/nonexistent/never-written.js").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "AJ_ERR_PLUGIN_BUNDLE_FAILED" });
    expect((err as Error).message).toContain("environment");
  });
});
