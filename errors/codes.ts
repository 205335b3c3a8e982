import { EXIT } from "./exit-codes.ts";

/** What a code means, and how it surfaces: the HTTP status it answers with, the exit code a command ends with. */
export interface ErrorCodeInfo {
  meaning: string;
  http?: number;
  /** Omitted: a command that reports this code exits `EXIT.failure` (1). */
  exit?: number;
}

export interface ErrorGroup {
  title: string;
  codes: Readonly<Record<string, ErrorCodeInfo>>;
}

/**
 * Every `AJ_ERR_...` code the project throws, answers or sends, by area. `docs/errors.md` is rendered from
 * this (`agentjet config errors`); a test checks that every code in the source is here, once.
 */
export const ERROR_GROUPS: readonly ErrorGroup[] = [
  {
    title: "CLI",
    codes: {
      AJ_ERR_USAGE: { meaning: "Bad flags or arguments for a command.", exit: EXIT.usage },
      AJ_ERR_UNKNOWN: { meaning: "An error without a code reached `agentjet env`'s output." },
      AJ_ERR_CONFIG_UNREADABLE: { meaning: "The run config file (or a resumed run's config.yaml) cannot be read.", exit: EXIT.notFound },
      AJ_ERR_INVALID_CONFIG: { meaning: "The run config does not match its schema (every issue with file:line:col).", http: 400, exit: EXIT.usage },
      AJ_ERR_REPORT_NOT_A_RUN_DIR: { meaning: "`agentjet report` was given a directory without metrics.jsonl.", exit: EXIT.notFound },
      AJ_ERR_SCAFFOLD_DIR_NOT_EMPTY: { meaning: "`agentjet env init` was pointed at a folder that is not empty." },
    },
  },
  {
    title: "Server: HTTP",
    codes: {
      AJ_ERR_INTERNAL: { meaning: "An unexpected server error (the log has the cause).", http: 500 },
      AJ_ERR_INVALID_REQUEST: { meaning: "A request body, query or parameter is malformed.", http: 400 },
      AJ_ERR_UNSUPPORTED_PARAMETER: { meaning: "A request asks for something this server cannot enforce (a schema keyword, a constraint).", http: 400 },
      AJ_ERR_CONTENT_TYPE: { meaning: "The request body is not the content type the route takes.", http: 415 },
      AJ_ERR_ROUTE_NOT_FOUND: { meaning: "No such route or asset.", http: 404 },
      AJ_ERR_ROUTE_AUTH_MISSING: { meaning: "A route was registered without `config.auth`; the server refuses to start with it." },
      AJ_ERR_METADATA_TOO_LARGE: { meaning: "An episode's metadata is larger than the server accepts.", http: 413 },
      AJ_ERR_TOO_MANY_REGISTERED: { meaning: "Too many episodes are registered and unclaimed (`server.maxRegisteredEpisodes`).", http: 429 },
    },
  },
  {
    title: "Server: auth",
    codes: {
      AJ_ERR_AUTH_MISSING: { meaning: "The route needs a token and the request has none.", http: 401 },
      AJ_ERR_AUTH_INVALID: { meaning: "A malformed Authorization header, or a token the server does not know.", http: 401 },
      AJ_ERR_AUTH_FORBIDDEN: { meaning: "The token is valid but its role may not call this route.", http: 403 },
      AJ_ERR_INVALID_API_KEY: { meaning: "The episode key on an OpenAI route is missing, malformed or not this server's.", http: 401 },
      AJ_ERR_HOST_NOT_ALLOWED: { meaning: "The Host header is not a name of this server (`server.allowedHosts`).", http: 403 },
      AJ_ERR_CROSS_ORIGIN: { meaning: "A browser request from another origin was refused.", http: 403 },
      AJ_ERR_AUTH_REMOTE_WITHOUT_TOKENS: { meaning: "Listening beyond loopback with tokens this process would only now generate.", exit: EXIT.usage },
      AJ_ERR_AUTH_TOKENS_FILE: { meaning: "The tokens file cannot be read or parsed.", exit: EXIT.usage },
      AJ_ERR_AUTH_WEAK_TOKEN: { meaning: "A configured token is too short.", exit: EXIT.usage },
    },
  },
  {
    title: "Server: episodes and models",
    codes: {
      AJ_ERR_EPISODE_NOT_FOUND: { meaning: "No episode with this id.", http: 404 },
      AJ_ERR_EPISODE_STATE: { meaning: "The episode's state does not allow this transition (e.g. ending one never claimed).", http: 409 },
      AJ_ERR_EPISODE_EXISTS: { meaning: "An episode with this id is already registered.", http: 409 },
      AJ_ERR_EPISODE_CLOSED: { meaning: "A call on an episode that already ended or was aborted.", http: 409 },
      AJ_ERR_EPISODE_BINDING: { meaning: "An agent is bound to something that is neither a policy nor a frozen model.", http: 400 },
      AJ_ERR_EPISODE_REWARDS: { meaning: "The rewards are missing, not finite or out of range; the episode is aborted, not trained.", http: 422 },
      AJ_ERR_EPISODE_STORAGE: { meaning: "run.db refused a read or write of the episodes table (disk full, a closed or corrupt database)." },
      AJ_ERR_EPISODE_NOT_YOURS: { meaning: "The episode belongs to the server's scheduler, not to this caller.", http: 403 },
      AJ_ERR_POLICY_NOT_FOUND: { meaning: "The key's policy is not one the server serves.", http: 404 },
      AJ_ERR_FROZEN_NOT_FOUND: { meaning: "The key's frozen model is not one the server knows.", http: 404 },
      AJ_ERR_FROZEN_UPSTREAM: { meaning: "A frozen model's upstream endpoint failed or answered malformed JSON.", http: 502 },
      AJ_ERR_TOKENIZER_UNKNOWN: { meaning: "The run config names a tokenizer this server does not have." },
      AJ_ERR_POOL_CORRUPT: { meaning: "A sample in the pool cannot be decoded (a corrupt or foreign database)." },
      AJ_ERR_RECORDING_FAILED: { meaning: "Calls could not be written to run.db, or its writer thread stopped answering." },
    },
  },
  {
    title: "Server: engine",
    codes: {
      AJ_ERR_ENGINE_BUSY: { meaning: "The engine is syncing weights or its sample pool is full; retry shortly.", http: 503 },
      AJ_ERR_ENGINE_OFFLINE: { meaning: "The engine is not started; configure and start it first.", http: 503 },
      AJ_ERR_ENGINE_NOT_CONFIGURED: { meaning: "No run config yet: POST /v1/engine/config first.", http: 409 },
      AJ_ERR_ENGINE_STATE: { meaning: "The engine must be stopped for this.", http: 409 },
      AJ_ERR_ENGINE_START: { meaning: "The engine did not start (the cause says why).", http: 422 },
      AJ_ERR_ENGINE_CONFIG: { meaning: "The engine config is inconsistent in a way its schema cannot say." },
      AJ_ERR_EMBEDDED_CONFIG: { meaning: "The embedded model's options do not describe a buildable model." },
      AJ_ERR_EMBEDDED_CONTEXT_OVERFLOW: { meaning: "A prompt or sample is longer than the embedded model's context." },
      AJ_ERR_EMBEDDED_INPUT: { meaning: "Token ids outside the vocabulary, an empty prompt, or sample arrays of different lengths." },
      AJ_ERR_EMBEDDED_CHECKPOINT_INVALID: { meaning: "An embedded checkpoint is missing, unreadable, or disagrees with its header." },
      AJ_ERR_EMBEDDED_CHECKPOINT_MISMATCH: { meaning: "An embedded checkpoint was written by a model of another shape." },
      AJ_ERR_EMBEDDED_CLOSED: { meaning: "The embedded engine was used after it was closed." },
      AJ_ERR_REPLICA_REQUEST: { meaning: "An inference replica refused the request (4xx); retrying elsewhere would not help." },
      AJ_ERR_REPLICA_UNAVAILABLE: { meaning: "An inference replica could not serve (network, timeout, 5xx, 429); retried on another." },
      AJ_ERR_REPLICA_PROTOCOL: { meaning: "An inference replica answered outside the token-in/token-out contract." },
      AJ_ERR_NO_REPLICA: { meaning: "Every attempt failed, or no replica serves the current weights version." },
      AJ_ERR_PUBLISH_FAILED: { meaning: "The trainer moved on but no replica could load the new weights; the old version keeps serving." },
      AJ_ERR_UNSERVED_TOKENS: { meaning: "A sample to train holds a generated span the engine never served." },
      AJ_ERR_CONTEXT_OVERFLOW: { meaning: "The prompt leaves no room for a single output token." },
      AJ_ERR_TRAINER_REQUEST: { meaning: "The trainer answered with a protocol error." },
      AJ_ERR_TRAINER_UNAVAILABLE: { meaning: "The trainer could not be reached, timed out, or did not speak the protocol." },
      AJ_ERR_TRAINER_PROTOCOL: { meaning: "The trainer speaks another protocol version." },
      AJ_ERR_FSDP_UNAVAILABLE: { meaning: "The torch trainer was asked for FSDP that this torch build cannot do." },
    },
  },
  {
    title: "Swarm protocol and client",
    codes: {
      AJ_ERR_SWARM_BAD_FRAME: { meaning: "The server received a frame that is not the swarm protocol; it closes the socket." },
      AJ_ERR_SWARM_HELLO_FIRST: { meaning: "A client sent a frame before its hello." },
      AJ_ERR_SWARM_CLOSING: { meaning: "The server is shutting down." },
      AJ_ERR_SWARM_PROTOCOL_VERSION: { meaning: "Client and server speak different swarm protocol versions (fatal)." },
      AJ_ERR_SWARM_CLIENT_ID_TAKEN: { meaning: "Another client, with another token, holds this client id (fatal)." },
      AJ_ERR_SWARM_ENV_MISMATCH: { meaning: "Not every environment the client offers fits the run; the client stays connected." },
      AJ_ERR_CLIENT_NO_SWARM: { meaning: "The URL answers but has no /swarm route: not an agentjet server, or the wrong port." },
      AJ_ERR_CLIENT_UNAUTHORIZED: { meaning: "The server refused the client token (401)." },
      AJ_ERR_CLIENT_REFUSED: { meaning: "The server refused the connection with another 4xx." },
      AJ_ERR_CLIENT_BAD_FRAME: { meaning: "The client received a frame that is not the swarm protocol." },
      AJ_ERR_CLIENT_CHAT: { meaning: "A chat completion the client made for an episode failed." },
      AJ_ERR_CLIENT_WORKFLOW: { meaning: "A `--workflow` file exports no workflow function." },
      AJ_ERR_CONNECTION: { meaning: "Python SDK: the server never answered." },
      AJ_ERR_EPISODE_LOST: { meaning: "Python SDK: the episode is gone on the server and the answer carried no code of its own." },
    },
  },
  {
    title: "Training runs (`agentjet train`, scheduler)",
    codes: {
      AJ_ERR_TRAIN_RUN_DIR_IN_USE: { meaning: "The run directory already holds a run; resume it or pick another." },
      AJ_ERR_TRAIN_NO_CHECKPOINT: { meaning: "A run cannot be resumed: no usable checkpoint." },
      AJ_ERR_TRAIN_UNKNOWN_EXAMPLE: { meaning: "`--example` names no example config.", exit: EXIT.notFound },
      AJ_ERR_TRAIN_ENVIRONMENT: { meaning: "An environment of the run could not be installed or opened." },
      AJ_ERR_TRAIN_PLUGIN_MISMATCH: { meaning: "A config entry's `path` holds another plugin, or another version, than the entry names." },
      AJ_ERR_TRAIN_NO_PROGRESS: { meaning: "Batches finish but no training step runs: batching or filtering drops every batch." },
      AJ_ERR_TRAIN_WARM_START: { meaning: "The warm-start phase failed." },
      AJ_ERR_TRAIN_STORAGE: { meaning: "The run directory could not be written; the run stops and can be resumed." },
      AJ_ERR_TRAIN_TRAINED_TWICE: { meaning: "An episode was about to be trained on a second time." },
      AJ_ERR_TRAIN_PORT_IN_USE: { meaning: "The server port is in use; pick another with --port." },
      AJ_ERR_SCHEDULER_NO_TASKS: { meaning: "An environment has no tasks in the split the run uses." },
      AJ_ERR_SCHEDULER_ROLE_TARGET: { meaning: "A role maps to something that is neither a policy, a frozen model nor `@builtin`." },
      AJ_ERR_SCHEDULER_UNMAPPED_ROLE: { meaning: "An environment has agents with a role the run config does not map." },
      AJ_ERR_SCHEDULER_STATE: { meaning: "The scheduler's saved state cannot be restored." },
    },
  },
  {
    title: "Sweeps (`agentjet sweep`)",
    codes: {
      AJ_ERR_SWEEP_USAGE: { meaning: "Bad flags or arguments for `agentjet sweep`.", exit: EXIT.usage },
      AJ_ERR_SWEEP_INVALID_FILE: { meaning: "The sweep file is not YAML or does not match the sweep schema.", exit: EXIT.usage },
      AJ_ERR_SWEEP_NOT_FOUND: { meaning: "A sweep file, its base config or a campaign file cannot be read.", exit: EXIT.notFound },
      AJ_ERR_SWEEP_UNKNOWN_FIELD: { meaning: "A parameter or override names no run config field.", exit: EXIT.usage },
      AJ_ERR_SWEEP_EMPTY: { meaning: "The search has nothing to run, or a value spec is unusable.", exit: EXIT.usage },
      AJ_ERR_SWEEP_INVALID_CONFIG: { meaning: "An expanded run's config fails the run config schema.", exit: EXIT.usage },
      AJ_ERR_SWEEP_CAMPAIGN_EXISTS: { meaning: "The campaign directory already holds a sweep.", exit: EXIT.usage },
      AJ_ERR_SWEEP_NO_CAMPAIGN: { meaning: "The directory has no readable campaign.json.", exit: EXIT.notFound },
      AJ_ERR_SWEEP_IN_USE: { meaning: "Another live sweep process owns the campaign." },
      AJ_ERR_SWEEP_FAILED: { meaning: "The sweep stopped on an error without a code of its own." },
    },
  },
  {
    title: "Environment store and registry (`agentjet env`)",
    codes: {
      AJ_ERR_ENV_NOT_FOUND: { meaning: "The registry has no environment (or version) with this name.", exit: EXIT.notFound },
      AJ_ERR_REGISTRY_INVALID: { meaning: "The registry does not match its schema." },
      AJ_ERR_REGISTRY_UNREADABLE: { meaning: "The registry cannot be read." },
      AJ_ERR_TARBALL_INVALID: { meaning: "A plugin tarball is malformed or unsafe to unpack." },
      AJ_ERR_PACK_PATH: { meaning: "A file in the plugin cannot be packed (a link, a path outside the folder)." },
      AJ_ERR_STORE_INTEGRITY: { meaning: "The content's sha256 differs from the pinned one; nothing was installed.", exit: EXIT.integrity },
      AJ_ERR_STORE_INVALID_PLUGIN: { meaning: "The fetched source is not a valid environment plugin (its manifest, its layout)." },
      AJ_ERR_STORE_SOURCE_FETCH: { meaning: "The plugin source could not be fetched." },
      AJ_ERR_STORE_SOURCE_NOT_FOUND: { meaning: "A local `--source` folder or tarball is not there.", exit: EXIT.notFound },
      AJ_ERR_STORE_DEPS_INSTALL: { meaning: "Installing the plugin's dependencies failed." },
      AJ_ERR_STORE_PREPARE: { meaning: "The plugin's prepare hook failed." },
      AJ_ERR_STORE_BUILD: { meaning: "Building the plugin (its bundle or image) failed." },
      AJ_ERR_STORE_SMOKE: { meaning: "The installed plugin failed its smoke check." },
      AJ_ERR_STORE_LOCK_INVALID: { meaning: "agentjet.lock does not match its schema." },
      AJ_ERR_STORE_NOT_INSTALLED: { meaning: "The environment is not installed in this project.", exit: EXIT.notFound },
    },
  },
  {
    title: "Sandboxes and plugin runtimes",
    codes: {
      AJ_ERR_PLUGIN_BUNDLE_BUILTIN: { meaning: "A vm plugin imports a Node builtin." },
      AJ_ERR_PLUGIN_BUNDLE_MISSING_DEP: { meaning: "A package the plugin imports is not in its node_modules." },
      AJ_ERR_PLUGIN_BUNDLE_FAILED: { meaning: "esbuild could not bundle the vm plugin." },
      AJ_ERR_PLUGIN_IMAGE_BUILD: { meaning: "The plugin's container image could not be built." },
      AJ_ERR_PLUGIN_UNKNOWN_SPLIT: { meaning: "No split with this name in the manifest." },
      AJ_ERR_PLUGIN_TASK_FILE: { meaning: "A split's task file cannot be read or parsed." },
      AJ_ERR_PLUGIN_EXTERNAL_SPLIT: { meaning: "A split reads user-supplied data and the environment was opened without a dataDir." },
      AJ_ERR_PLUGIN_GENERATE_TASKS: { meaning: "The plugin's generateTasks failed or returned something invalid." },
      AJ_ERR_PLUGIN_RUNTIME_CLOSED: { meaning: "The environment runtime was used after it was closed." },
      AJ_ERR_PLUGIN_CONTAINER_RUNTIME: { meaning: "The container runtime (Docker, gVisor) is missing or failed." },
    },
  },
  {
    title: "Rewards",
    codes: {
      AJ_ERR_REWARD_MODEL_UNAVAILABLE: { meaning: "A reward model cannot be loaded or run (retried, never reward 0)." },
      AJ_ERR_REWARD_MODEL_FAILED: { meaning: "A reward model returned no usable score." },
      AJ_ERR_JUDGE_FAILED: { meaning: "An LLM judge could not be reached or answered without content." },
      AJ_ERR_JUDGE_VERDICT: { meaning: "An LLM judge's verdict is malformed." },
    },
  },
  {
    title: "Dashboard",
    codes: {
      AJ_ERR_DASHBOARD_NO_RUN: { meaning: "No run yet: the dashboard has no run.db to read.", http: 404 },
      AJ_ERR_DASHBOARD_CODE_INVALID: { meaning: "The dashboard login link was used or has expired.", http: 401 },
    },
  },
  {
    title: "MCP tools (`agentjet mcp`)",
    codes: {
      AJ_ERR_MCP_INVALID_INPUT: { meaning: "Tool arguments fail the tool's input schema." },
      AJ_ERR_MCP_INVALID_ARGUMENTS: { meaning: "Tool arguments pass the schema but do not go together." },
      AJ_ERR_MCP_UNKNOWN_TOOL: { meaning: "No such tool, or it is disabled." },
      AJ_ERR_MCP_INTERNAL: { meaning: "A tool failed with an error without a code." },
      AJ_ERR_MCP_UNKNOWN_PROCESS: { meaning: "No run or sweep with this id or directory." },
      AJ_ERR_MCP_NOT_RUNNING: { meaning: "The run or sweep is not running." },
      AJ_ERR_MCP_PROCESS_ACTIVE: { meaning: "A run or sweep started from this server still uses the directory." },
      AJ_ERR_MCP_INVALID_CONFIG: { meaning: "The run config given to run_start fails its schema." },
      AJ_ERR_MCP_NOT_A_RUN_DIR: { meaning: "The directory is not a run directory." },
      AJ_ERR_MCP_EPISODE_NOT_FOUND: { meaning: "No episode with this id in the run's run.db." },
      AJ_ERR_MCP_BAD_CURSOR: { meaning: "A malformed paging cursor." },
      AJ_ERR_MCP_SWEEP_UNAVAILABLE: { meaning: "This agentjet has no `sweep` command." },
      AJ_ERR_MCP_SPAWN: { meaning: "A run or sweep process could not be started." },
    },
  },
  {
    title: "Bundled environments",
    codes: {
      AJ_ERR_AIME_DATA: { meaning: "AIME: the data file cannot be read or parsed." },
      AJ_ERR_AIME_INVALID_TASK: { meaning: "AIME: a task does not have the AIME shape." },
      AJ_ERR_APPWORLD_DATA: { meaning: "AppWorld: the task data is missing or malformed." },
      AJ_ERR_APPWORLD_HTTP: { meaning: "AppWorld: its server answered an HTTP error." },
      AJ_ERR_APPWORLD_REPLY: { meaning: "AppWorld: its server's reply is not what the environment expects." },
      AJ_ERR_APPWORLD_START: { meaning: "AppWorld: its server did not start." },
    },
  },
];

/** Every registered code and its row, with the title of its group. */
export const ERROR_CODES: ReadonlyMap<string, ErrorCodeInfo & { group: string }> = new Map(
  ERROR_GROUPS.flatMap((g) => Object.entries(g.codes).map(([code, info]) => [code, { ...info, group: g.title }] as const)),
);
