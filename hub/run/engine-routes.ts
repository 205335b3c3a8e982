import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { callerIdentity } from "../../server/episodes/index.ts";
import { parseRunConfig, type RunConfig } from "../../server/config/index.ts";
import { HttpError, parseBody } from "../../server/openai/index.ts";
import { type EngineState, type EngineStatus, engineStateError } from "./engine-status.ts";
import type { RunResult } from "./run-loop.ts";

const ConfigBodySchema = z.object({ config: z.record(z.string(), z.unknown()) });
const AgreeSyncBodySchema = z.object({ clientId: z.string().min(1).max(200).optional() }).default({});

/** What the engine routes drive: the training service (`service.ts`), which registers them. */
export interface EngineControl {
  state(): EngineState;
  status(): EngineStatus;
  configure(config: RunConfig): void;
  start(): Promise<void>;
  stop(): Promise<RunResult | null>;
  agreeSync(clientId: string): boolean;
}

/**
 * Engine control (see server/README.md): the status any client may read; config, start and stop for the
 * admin; `agree-sync` for client-driven clients under the `any-client` / `all-clients` strategies.
 */
export async function engineRoutes(app: FastifyInstance, service: EngineControl): Promise<void> {
  app.get("/v1/engine/status", { config: { auth: "client" } }, async () => service.status());

  app.post("/v1/engine/config", { config: { auth: "admin" } }, async (request) => {
    const body = parseBody(ConfigBodySchema, request.body);
    // JSON is YAML: one validator, with the same messages as a config file's.
    const parsed = parseRunConfig(JSON.stringify(body.config), "POST /v1/engine/config");
    if (parsed.kind !== "ok") {
      const issues = parsed.kind === "invalid" ? parsed.issues.map((i) => `${i.path || "(root)"}: ${i.message}${i.hint ? ` (hint: ${i.hint})` : ""}`) : [];
      throw new HttpError(400, "AJ_ERR_INVALID_CONFIG", `invalid run config: ${issues.join("; ")}`, { param: "config" });
    }
    service.configure(parsed.config);
    return service.status();
  });

  app.post("/v1/engine/start", { config: { auth: "admin" } }, async () => {
    try {
      await service.start();
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw new HttpError(422, "AJ_ERR_ENGINE_START", `the engine did not start: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return service.status();
  });

  app.post("/v1/engine/stop", { config: { auth: "admin" } }, async () => {
    const result = await service.stop();
    return { ...service.status(), stopped: result !== null };
  });

  app.post("/v1/engine/agree-sync", { config: { auth: "client" } }, async (request) => {
    const body = parseBody(AgreeSyncBodySchema, request.body ?? {});
    const clientId = body.clientId ?? callerIdentity(request);
    if (!service.agreeSync(clientId)) throw engineStateError(service.state(), `the engine is ${service.state()}`);
    return { agreed: clientId };
  });
}
