import { resolve } from "node:path";
import { AuthConfigError, describeTokens } from "../../../server/app/index.ts";
import { formatConfigIssues, loadRunConfig } from "../../../server/config/index.ts";
import { TrainingService } from "../../run/service.ts";
import { EXIT, exitCodeFor, flagCommand, parseIntFlag } from "../command.ts";
import { onInterrupt } from "../interrupt.ts";

const HELP = `Usage: agentjet serve [--config <run.yaml>] [--host <addr>] [--port <n>] [--run-dir <dir>]

Starts the training server: the OpenAI-compatible API agents call (/v1/chat/completions, /v1/models),
the episode routes, /swarm for swarm clients, the scheduler and the training coordinator. Every call is
recorded to <run-dir>/run.db; steps, checkpoints and metrics.jsonl go to the run directory as with
agentjet train (which is this server plus local clients, progress output and a report).

  With --config it starts the engine at once and trains as the config says, waiting for clients.
  Without it the engine is offline until an admin client sends a config and starts it:
    curl -X POST $URL/v1/engine/config -H "authorization: Bearer $ADMIN" \\
         -H 'content-type: application/json' -d '{"config": {...}}'
    curl -X POST $URL/v1/engine/start -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' -d '{}'
  GET /v1/engine/status shows the state (offline, booting, rolling, draining, syncing), the step,
  the weight versions and the environments whose episodes wait for a client that can run them
  ("waiting"; also a warning in the log); POST /v1/engine/stop stops it cleanly (a checkpoint),
  /start starts it again and continues from that checkpoint. A serve started on a run directory that
  holds a run continues it the same way; one killed before its first checkpoint starts again from step
  0. Episodes that were open when it stopped are recorded as aborted (server-restart).

Clients, from this machine or others:
  agentjet client --server http://<this host>:<port> --token $CLIENT --envs <name>   scheduled episodes
  POST /v1/episodes/begin {"taskId": "..."} -> base_url + one key per agent, then
  POST /v1/episodes/<id>/end {"rewards": {"main": 1}}                 client-driven episodes
For clients on other machines listen on a reachable address (--host 0.0.0.0) and give them the
client token (see README.md, "Two machines").

Tokens: every route but the OpenAI ones (which take episode keys) needs "Authorization: Bearer <token>",
/swarm included. The admin token configures, starts and stops the engine and reads
recorded episodes; client tokens (and the admin token) begin, claim, end and abort episodes and
connect to /swarm. Each comes from the run config (server.auth.adminToken / clientTokens), else the
environment, else <run-dir>/tokens.json. With none set, serve generates both into <run-dir>/tokens.json
(mode 0600) and logs where they are; give the client token to \`agentjet client --token\`. Listening
beyond loopback (--host 0.0.0.0) is refused until tokens are set, so generate them once on 127.0.0.1
or set them yourself. The tokens belong to the server: a config sent later does not change them.

Structured logs (JSON, one line each, engine state changes included) go to standard output. The
dashboard is at <url>/dashboard: the logged link carries a one-time login code (never the admin
token); later visits ask for the admin token. GET /metrics is Prometheus text for a client token.

Options:
  --config <file>    Run config (YAML), validated before anything starts. Default: none (offline).
  --host <addr>      Address to listen on. Default: the config's server.host, else 127.0.0.1. Anything
                     but loopback needs tokens set beforehand (see Tokens).
  --port <n>         Port to listen on; 0 picks a free one. Default: the config's server.port, else 8700.
  --run-dir <dir>    Run directory (run.db, metrics.jsonl, checkpoints/). Default: the config's run.dir.
  --project <dir>    Project whose store holds the environments (installed there when missing) and
                     where relative paths resolve. Default: the current directory.
  --public-url <u>   How clients reach this server (agents get <u>/v1). Default: the listen address,
                     or this machine's host name when listening on 0.0.0.0.
  --log-level <l>    fatal, error, warn, info, debug or trace. Default: info.
  --help             Show this help.

Environment:
  AGENTJET_ADMIN_TOKEN  The admin token, when the config has no server.auth.adminToken.
  AGENTJET_CLIENT_TOKEN A client token, when the config has no server.auth.clientTokens.
  AGENTJET_KEY_SECRET   HMAC secret for episode keys when the config has no server.keySecret
                        (otherwise a random one: keys then die with the process).
  OPENAI_API_KEY        API key of frozen models that set no apiKey.

Exit codes: 130 stopped (Ctrl-C, SIGTERM), 1 failed (the engine did not start, the port is in use),
2 usage, invalid config or tokens, 3 the config file cannot be read.

Examples:
  agentjet serve --config run.yaml
  agentjet serve --port 8700 --run-dir runs/exp1          # then configure and start it over HTTP
  agentjet serve --config run.yaml --host 0.0.0.0 --public-url http://gpu-box:8700`;

const FLAGS = {
  config: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  "run-dir": { type: "string" },
  "public-url": { type: "string" },
  project: { type: "string" },
  "log-level": { type: "string", default: "info" },
} as const;

export const command = flagCommand(FLAGS, {
  name: "serve",
  summary: "Start the training server (OpenAI-compatible API, /swarm, scheduler, trainer); with no config it waits for one",
  help: HELP,
  async run(values) {
    const port = values.port === undefined ? undefined : parseIntFlag("port", values.port, 0, 65535);
    if (port?.ok === false) {
      console.error(`agentjet serve: ${port.message}`);
      return EXIT.usage;
    }
    const levels = ["fatal", "error", "warn", "info", "debug", "trace"];
    if (!levels.includes(values["log-level"])) {
      console.error(`agentjet serve: --log-level must be one of ${levels.join(", ")}`);
      return EXIT.usage;
    }
    let config;
    if (values.config !== undefined) {
      const loaded = await loadRunConfig(values.config);
      if (loaded.kind !== "ok") {
        console.error(`agentjet serve: ${loaded.kind === "invalid" ? "invalid run config" : "cannot read the run config"}\n${formatConfigIssues(loaded)}`);
        return exitCodeFor(loaded.kind === "unreadable" ? "AJ_ERR_CONFIG_UNREADABLE" : "AJ_ERR_INVALID_CONFIG");
      }
      config = loaded.config;
    }
    let service: TrainingService;
    try {
      service = await TrainingService.listen({
        host: values.host ?? config?.server.host ?? "127.0.0.1",
        port: port?.value ?? config?.server.port ?? 8700,
        projectDir: resolve(values.project ?? "."),
        ...(values["run-dir"] !== undefined ? { runDir: values["run-dir"] } : {}),
        ...(values["public-url"] !== undefined ? { publicUrl: values["public-url"] } : {}),
        ...(config ? { config } : {}),
        logger: { level: values["log-level"] },
        run: { report: false },
      });
    } catch (err) {
      if (err instanceof AuthConfigError) {
        console.error(`agentjet serve: ${err.code}: ${err.message}`);
        return exitCodeFor(err.code);
      }
      if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
        console.error(`agentjet serve: the port is in use (${(err as Error).message}); pick another with --port, or --port 0 for a free one`);
        return EXIT.failure;
      }
      throw err;
    }
    const tokens = service.tokens();
    service.app.log.info({ url: service.origin(), tokens: tokens.file, admin: tokens.sources.admin, client: tokens.sources.client }, describeTokens(tokens));
    service.app.log.info({ dashboard: service.dashboardUrl() }, "dashboard (the link's login code works once; afterwards the page asks for the admin token)");
    // Signals are heard from here on, booting included: a stop while the engine boots is clean too.
    let stopping = false;
    const stopped = new Promise<number>((resolve) => {
      const stop = (signal: NodeJS.Signals): void => {
        stopping = true;
        service.app.log.info({ signal }, "shutting down");
        void service.close().then(() => resolve(EXIT.interrupted));
      };
      onInterrupt(stop, () => process.exit(EXIT.interrupted));
    });
    if (config) {
      try {
        await service.start();
      } catch (err) {
        if (stopping) return await stopped;
        console.error(`agentjet serve: the engine did not start: ${err instanceof Error ? err.message : String(err)}`);
        await service.close();
        return EXIT.failure;
      }
    } else {
      service.app.log.info({ url: service.origin() }, "engine offline: POST /v1/engine/config then /v1/engine/start");
    }
    return await stopped;
  },
});
