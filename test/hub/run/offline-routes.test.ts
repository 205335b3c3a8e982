import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isRunPath } from "../../../hub/run/run-routes.ts";
import { notServingMessage, TrainingService } from "../../../hub/run/service.ts";
import { fillParams } from "../../server/helpers/open-routes.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { smallConfig } from "./helpers.ts";

afterAll(removeTempDirs);

describe("the service's answer for paths it does not serve itself", () => {
  // Regression: while offline every unknown path was 503 "the engine is offline" (even without a token),
  // so a client pointed at http://host/v1 (it then asks for /v1/swarm) retried for ever.
  it("offline: a run's path is 503 AJ_ERR_ENGINE_OFFLINE, any other path 404 AJ_ERR_ROUTE_NOT_FOUND", async () => {
    const project = tempDir("svc-offline");
    const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir: join(project, "run"), log: () => undefined });
    try {
      const get = async (path: string, init: RequestInit = {}) => {
        const res = await fetch(`${service.origin()}${path}`, init);
        return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
      };
      for (const path of ["/nothing", "/favicon.ico", "/v1/swarm", "/v1/chat", "/v1/episodesx"]) expect({ path, ...(await get(path)) }).toEqual({ path, status: 404, code: "AJ_ERR_ROUTE_NOT_FOUND" });
      const chat = { method: "POST", headers: { "content-type": "application/json" }, body: "{}" };
      for (const [path, init] of [["/v1/chat/completions", chat], ["/v1/episodes", {}], ["/v1/episodes/e1/end", chat], ["/v1/models?x=1", {}]] as const) {
        expect({ path, ...(await get(path, init)) }).toEqual({ path, status: 503, code: "AJ_ERR_ENGINE_OFFLINE" });
      }
    } finally {
      await service.close();
    }
  });

  it("every route of an assembled run is a run path, and none of the service's own is", { timeout: 120_000 }, async () => {
    const project = tempDir("svc-offline");
    const config = await smallConfig("tasks", 100);
    const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir: join(project, "run"), config, log: () => undefined });
    try {
      const own = new Set(service.routes().map((r) => `${r.method} ${r.url}`));
      await service.start();
      const runs = service.routes().filter((r) => !own.has(`${r.method} ${r.url}`));
      expect(runs.length).toBeGreaterThan(10);
      expect(runs.filter((r) => !isRunPath(fillParams(r.url))).map((r) => r.url)).toEqual([]);
      expect([...own].filter((r) => isRunPath(fillParams(r.split(" ")[1]!)))).toEqual([]);
    } finally {
      await service.close();
    }
  });

  it("while the engine boots, a run path's 503 says to retry, not to configure and start an engine already starting", () => {
    expect(notServingMessage("booting")).toMatch(/^the engine is booting: retry shortly/);
    expect(notServingMessage("booting")).not.toContain("configure and start");
    expect(notServingMessage("offline")).toBe("the engine is offline: configure and start it (POST /v1/engine/config, /v1/engine/start)");
  });
});
