import { type ClientEnvironment, ENV_MISMATCH_CODE, SwarmClient } from "../../../sdk/swarm/index.ts";
import { resolveClientEnvs } from "../../swarm/client-environments.ts";
import { createFailureLog } from "../../swarm/failure-log.ts";
import { judgesWithoutEndpoint } from "../../../sdk/rewards/index.ts";
import { reloadLocalPlugins } from "../../swarm/reload-local-plugins.ts";
import { createWorkflowLoader } from "../../swarm/workflow-loader.ts";
import { EXIT, exitCodeFor, flagCommand, parseIntFlag } from "../command.ts";
import { onInterrupt } from "../interrupt.ts";

const HELP = `Usage: agentjet client --server URL [options]

A swarm client (CPU only): connects to the server over WebSocket, announces its environments, runs the
episodes the scheduler assigns in their sandboxes, and reports rewards. Reconnects with backoff when the
connection drops or the server is not up yet; stops with the reason when the server refuses it (no
/swarm route at that URL, a missing or wrong token, another protocol version).

Tokens: the server's control plane needs a client token (or the admin token). \`agentjet serve\` prints
where its tokens are (by default it generates them into <run-dir>/tokens.json, mode 0600); copy the
client token to this machine and pass it with --token or AGENTJET_CLIENT_TOKEN.

Options:
  --server URL        The swarm server, e.g. http://127.0.0.1:8700 (required; env AGENTJET_SERVER)
  --token TOKEN       Client token (env AGENTJET_CLIENT_TOKEN); prefer the environment variable, since
                      arguments are visible to other users of this machine
  --envs a,b          Environments to offer (default: every local plugin and every installed one).
                      The server sends a client episodes only of environments it offers (name@version,
                      and the run's hash unless it allows development versions); an environment of the
                      run that no connected client offers waits, and so does training: the server's
                      log and /v1/engine/status ("waiting") name it until a client for it connects
  --env-path DIR      A local plugin folder, or a folder of them; repeatable. A local plugin wins over
                      the installed one of the same name and is announced as a development version
                      with the hash of its files. Runs that pin a hash refuse it (both sides say so)
                      unless their environment entry has \`allowDev: true\` or \`path\`.
  --concurrency N     Episodes at once (default 8)
  --episodes-per-instance N  Episodes one sandbox instance serves at once, their calls batched into one
                      message per instance: fewer round trips for short episodes (default 1)
  --workflow FILE     A file exporting \`workflow\` (any OpenAI-compatible client works inside it);
                      default: each environment's default agent loop
  --watch             Reload the workflow file and re-open edited local plugins (replacing saves
                      included) and announce the new code hash; takes effect on the next episode,
                      without restarting the server; each episode records the hash it ran with
  --agree-sync-every N  Send agree_sync after every N rewarded episodes: the any-client and all-clients
                      batching strategies train when clients agree (default 0: never)
  --client-id ID      Kept across restarts so the scheduler re-attaches running episodes (default: random)
  --project DIR       Project whose agentjet.lock and store hold installed environments (default: .)
  --help              Show this help

Exit codes: 130 stopped (Ctrl-C, SIGTERM), 1 the server refused this client (the reason is printed),
2 usage, 3 an environment is not found.

Examples:
  agentjet client --server http://127.0.0.1:8700 --envs aime,werewolves --concurrency 8
  AGENTJET_CLIENT_TOKEN=aj-client-... agentjet client --server http://gpu-box:8700 --env-path ./my-env --workflow ./agent.ts --watch`;

const FLAGS = {
  server: { type: "string" },
  token: { type: "string" },
  envs: { type: "string" },
  "env-path": { type: "string", multiple: true },
  concurrency: { type: "string" },
  "episodes-per-instance": { type: "string" },
  workflow: { type: "string" },
  watch: { type: "boolean", default: false },
  "client-id": { type: "string" },
  "agree-sync-every": { type: "string" },
  project: { type: "string" },
} as const;

export const command = flagCommand(FLAGS, {
  name: "client",
  summary: "Run a swarm client: episodes in sandboxes, rewards to the server",
  help: HELP,
  async run(args) {
    const usage = (message: string): number => {
      process.stderr.write(`agentjet client: ${message}\n\n${HELP}\n`);
      return EXIT.usage;
    };
    const server = args.server ?? process.env.AGENTJET_SERVER;
    if (!server) return usage("--server is required (or AGENTJET_SERVER): the URL of agentjet serve or train, e.g. http://127.0.0.1:8700");
    if (!URL.canParse(server) || !/^(http|https|ws|wss):$/.test(new URL(server).protocol)) {
      return usage(`--server must be an http(s) or ws(s) URL such as http://127.0.0.1:8700, got '${server}'`);
    }
    const int = (flag: "concurrency" | "episodes-per-instance" | "agree-sync-every", fallback: number, min: number) => {
      const value = args[flag];
      return value === undefined ? { ok: true as const, value: fallback } : parseIntFlag(flag, value, min);
    };
    const concurrencyFlag = int("concurrency", 8, 1);
    const perInstanceFlag = int("episodes-per-instance", 1, 1);
    const agreeEveryFlag = int("agree-sync-every", 0, 0);
    if (!concurrencyFlag.ok) return usage(concurrencyFlag.message);
    if (!perInstanceFlag.ok) return usage(perInstanceFlag.message);
    if (!agreeEveryFlag.ok) return usage(agreeEveryFlag.message);
    const [concurrency, perInstance, agreeEvery] = [concurrencyFlag.value, perInstanceFlag.value, agreeEveryFlag.value];
    const names = (args.envs ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    const { sources, missing } = resolveClientEnvs(names, {
      envPaths: args["env-path"] ?? [],
      projectDir: args.project ?? process.cwd(),
      maxInstances: concurrency,
      episodesPerInstance: perInstance,
    });
    if (missing.length > 0 || sources.length === 0) {
      process.stderr.write(`agentjet client: ${missing.length ? `not found: ${missing.join(", ")}` : "no environments to offer: none is installed in this project"} (install with \`agentjet env add\` or pass --env-path)\n`);
      return EXIT.notFound;
    }
    // A judge without an endpoint would fail every episode of its environment, retried until the run gives up.
    const unjudged = sources.flatMap((src) => judgesWithoutEndpoint(src.manifest.rewardModels, "episode").map((j) => `${src.name}: judge '${j}'`));
    if (unjudged.length > 0) {
      process.stderr.write(`agentjet client: ${unjudged.join(", ")} has no endpoint: set baseUrl in the manifest's rewardModels, or $AGENTJET_JUDGE_BASE_URL on this machine\n`);
      return EXIT.usage;
    }
    const log = (line: string) => process.stderr.write(`agentjet client: ${line}\n`);
    const failures = createFailureLog(log);
    const opened = new Map<string, ClientEnvironment>();
    for (const s of sources) opened.set(s.name, await s.open());
    const loader = args.workflow
      ? createWorkflowLoader(args.workflow, { watch: args.watch, onReload: (v) => log(`workflow reloaded (v${v})`) })
      : null;
    const token = args.token ?? process.env.AGENTJET_CLIENT_TOKEN;
    let fatal: (code: string) => void = () => undefined;
    const client = new SwarmClient({
      url: server,
      ...(token ? { token } : {}),
      ...(args["client-id"] ? { clientId: args["client-id"] } : {}),
      environments: [...opened.values()],
      concurrency,
      ...(agreeEvery > 0 ? { agreeSyncEvery: agreeEvery } : {}),
      ...(loader ? { loadWorkflow: loader.load } : {}),
      onEvent: (e) => {
        if (e.type === "connected") log(`connected (${[...opened.values()].map(describeEnv).join(", ")})`);
        else if (e.type === "disconnected") log(`disconnected (${e.reason}); retrying in ${e.retryInMs} ms`);
        else if (e.type === "fatal") {
          log(`${e.code}: ${e.message}`);
          fatal(e.code);
        } else if (e.type === "error" && e.code === ENV_MISMATCH_CODE) log(`not every environment here fits the run (${e.code}):\n  ${e.message.split("\n").join("\n  ")}`);
        else if (e.type === "error") log(`${e.code}: ${e.message}`);
        else if (e.type === "episode-abort") failures.failed(e.episodeId, e.kind, e.message);
      },
    });
    const reloader = args.watch ? reloadLocalPlugins({ sources, opened, client, log }) : null;
    let fatalCode: string | undefined;
    const ended = new Promise<NodeJS.Signals | "fatal">((resolve) => {
      fatal = (code) => {
        fatalCode = code;
        resolve("fatal");
      };
      onInterrupt(resolve, () => process.exit(EXIT.interrupted));
    });
    // A refusal ends `ended` too (through onEvent); start() rejecting says nothing more.
    client.start().catch(() => undefined);
    const signal = await ended;
    if (signal !== "fatal") log(`${signal}: stopping`);
    const retired = reloader?.close();
    loader?.close();
    await client.stop();
    failures.close();
    await retired;
    await Promise.all([...opened.values()].map((o) => o.runtime.close()));
    return signal === "fatal" ? exitCodeFor(fatalCode) : EXIT.interrupted;
  },
});

function describeEnv(e: ClientEnvironment): string {
  const m = e.runtime.manifest;
  return `${m.name}@${m.version}${e.dev ? ` dev ${e.hash.slice(0, 12)}` : ""}`;
}
