import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TrainingService } from "../../../hub/run/service.ts";
import { removeTempDirs, tempDir } from "../helpers.ts";
import { smallConfig } from "./helpers.ts";
import { SERVICE_OPEN_ROUTES, fillParams as fill } from "../../server/helpers/open-routes.ts";

afterAll(removeTempDirs);

describe("the service's route table (serve and train)", () => {
  it("declares auth on every route, its own and the run's, and refuses a missing or wrong token, and a client token on admin routes, over HTTP", { timeout: 120_000 }, async () => {
    const project = tempDir("svc-routes");
    const config = await smallConfig("tasks", 100);
    const service = await TrainingService.listen({ host: "127.0.0.1", port: 0, projectDir: project, runDir: join(project, "run"), config, log: () => undefined });
    try {
      await service.start();
      const routes = service.routes();
      for (const url of ["/v1/engine/status", "/v1/engine/config", "/v1/engine/start", "/v1/engine/stop", "/v1/engine/agree-sync", "/v1/episodes/begin", "/swarm"]) {
        expect(routes.some((r) => r.url === url), url).toBe(true);
      }
      expect(routes.filter((r) => r.auth === "public" || r.auth === "episode-key").map((r) => `${r.method} ${r.url} ${r.auth}`).sort()).toEqual(SERVICE_OPEN_ROUTES.sort());
      const client = service.tokens().clientTokens[0]!;
      const failures: string[] = [];
      for (const r of routes.filter((x) => (x.auth === "client" || x.auth === "admin") && x.url !== "/swarm")) {
        const tries: Array<[string, Record<string, string>, number]> = [
          ["no token", {}, 401],
          ["a wrong token", { authorization: "Bearer wrong-token-0123456789" }, 401],
        ];
        if (r.auth === "admin") tries.push(["a client token", { authorization: `Bearer ${client}` }, 403]);
        for (const [what, headers, status] of tries) {
          const body = r.method === "POST" ? { body: "{}", headers: { ...headers, "content-type": "application/json" } } : { headers };
          const res = await fetch(`${service.origin()}${fill(r.url)}`, { method: r.method, ...body });
          if (res.status !== status) failures.push(`${r.method} ${r.url} with ${what}: ${res.status}, expected ${status}`);
        }
      }
      expect(failures).toEqual([]);
      expect(service.status().state).toBe("rolling");
    } finally {
      await service.close();
    }
  });
});
