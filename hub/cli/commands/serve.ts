import { parseArgs } from "node:util";
import { describeTokens, resolveAuthTokens } from "../../../server/app/auth-tokens.ts";
import { buildServer } from "../../../server/app/build-server.ts";
import { AuthConfigError } from "../../../server/app/errors.ts";
import { closeServer } from "../../../server/app/close-server.ts";
import { formatConfigIssues, loadRunConfig } from "../../../server/config/load-run-config.ts";
import { type Command, EXIT } from "../command.ts";

const HELP = `Usage: agentjet serve --config <run.yaml> [--host <addr>] [--port <n>] [--run-dir <dir>]

Starts the swarm server: the OpenAI-compatible API (POST /v1/chat/completions, GET /v1/models), the
episode routes (/v1/episodes/...) and the tracker that records every call to <run-dir>/run.db.
Structured logs (JSON, one line each) go to standard output.

Options:
  --config <file>   Run config (YAML), validated before anything starts. Required.
  --host <addr>     Address to listen on. Default: the config's server.host (127.0.0.1). Anything
                    but loopback needs tokens set beforehand (see Tokens).
  --port <n>        Port to listen on; 0 picks a free one. Default: the config's server.port (8700).
  --run-dir <dir>   Run directory (run.db lives there). Default: the config's run.dir (runs/latest).
  --log-level <l>   fatal, error, warn, info, debug or trace. Default: info.
  --help            Show this help.

Tokens: every route but the OpenAI ones (which take episode keys) and /swarm needs
"Authorization: Bearer <token>". The admin token configures, starts and stops the engine and reads
recorded episodes; client tokens (and the admin token) begin, claim, end and abort episodes and
connect to /swarm. Each comes from the run config (server.auth.adminToken / clientTokens), else the
environment, else <run-dir>/tokens.json. With none set, serve generates both into <run-dir>/tokens.json
(mode 0600) and logs where they are; give the client token to \`agentjet client --token\`. Listening
beyond loopback (--host 0.0.0.0) is refused until tokens are set, so generate them once on 127.0.0.1
or set them yourself.

Environment:
  AGENTJET_ADMIN_TOKEN  The admin token, when the config has no server.auth.adminToken.
  AGENTJET_CLIENT_TOKEN A client token, when the config has no server.auth.clientTokens.
  AGENTJET_KEY_SECRET   HMAC secret for episode keys when the config has no server.keySecret
                        (otherwise a random one: keys then die with the process).
  OPENAI_API_KEY        API key of frozen models that set no apiKey.

Examples:
  agentjet serve --config run.yaml
  agentjet serve --config run.yaml --port 9000 --run-dir runs/exp1`;

export const command: Command = {
  name: "serve",
  summary: "Start the swarm server (OpenAI-compatible API, episodes, call recording)",
  help: HELP,
  async run(argv) {
    let values;
    try {
      ({ values } = parseArgs({
        args: argv,
        options: {
          config: { type: "string" },
          host: { type: "string" },
          port: { type: "string" },
          "run-dir": { type: "string" },
          "log-level": { type: "string", default: "info" },
        },
        strict: true,
      }));
    } catch (err) {
      console.error(`agentjet serve: ${(err as Error).message}\n\n${HELP}`);
      return EXIT.usage;
    }
    if (!values.config) {
      console.error(`agentjet serve: --config is required\n\n${HELP}`);
      return EXIT.usage;
    }
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      console.error(`agentjet serve: --port must be an integer 0-65535, got '${values.port}'`);
      return EXIT.usage;
    }
    const levels = ["fatal", "error", "warn", "info", "debug", "trace"];
    if (!levels.includes(values["log-level"])) {
      console.error(`agentjet serve: --log-level must be one of ${levels.join(", ")}`);
      return EXIT.usage;
    }
    const loaded = await loadRunConfig(values.config);
    if (loaded.kind !== "ok") {
      console.error(`agentjet serve: invalid run config\n${formatConfigIssues(loaded)}`);
      return loaded.kind === "unreadable" ? EXIT.notFound : EXIT.usage;
    }
    const config = loaded.config;
    const runDir = values["run-dir"] ?? config.run.dir;
    const host = values.host ?? config.server.host;
    let auth;
    try {
      auth = resolveAuthTokens({ auth: config.server.auth, runDir, host });
    } catch (err) {
      if (!(err instanceof AuthConfigError)) throw err;
      console.error(`agentjet serve: ${err.code}: ${err.message}`);
      return EXIT.usage;
    }
    const app = await buildServer({ config, runDir, auth, logger: { level: values["log-level"] } });
    const address = await app.listen({ host, port: port ?? config.server.port });
    app.log.info({ address, runDir, policies: Object.keys(config.policies), frozen: Object.keys(config.frozen) }, "agentjet server listening");
    app.log.info({ tokens: auth.file, admin: auth.sources.admin, client: auth.sources.client }, describeTokens(auth));
    return await new Promise<number>((resolve) => {
      const stop = (signal: NodeJS.Signals): void => {
        app.log.info({ signal }, "shutting down");
        void closeServer(app).then(() => resolve(EXIT.interrupted));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
  },
};
