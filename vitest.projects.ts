// Which vitest project a test file belongs to (vitest.config.ts). A file listed here under `e2e` or
// `integration` runs there; every other test file is a `unit` test. test/projects.test.ts checks that
// each test file lands in exactly one project and that no entry here names a file that is gone.
// Globs use `**` and `*` only.

/** Every test file, whatever its project. */
export const TEST_FILES = "test/**/*.test.ts";

/** Starts processes of its own: the `agentjet` CLI, Python, Docker containers, Chromium. */
export const E2E = [
  "test/e2e/**/*.test.ts",
  "**/*.e2e.test.ts",
  "test/bench/gpu-smoke.test.ts",
  "test/environments/appworld/docker.test.ts",
  "test/hub/cli.test.ts",
  "test/hub/conformance.test.ts",
  "test/hub/contributor-path.test.ts",
  "test/hub/dashboard/reward-parts.test.ts",
  "test/hub/env-info.test.ts",
  "test/hub/mcp/*.test.ts",
  "test/hub/pack.test.ts",
  "test/hub/python-env.test.ts",
  "test/hub/serve-auth.test.ts",
  "test/hub/sweep/cli.test.ts",
  "test/hub/sweep/interrupt.test.ts",
  "test/hub/sweep/kill-resume.test.ts",
  "test/hub/train/cli.test.ts",
  "test/hub/train/prepare-environments.test.ts",
  "test/hub/train/kill-resume.test.ts",
  "test/hub/train/tree-training.test.ts",
  "test/plugins/container-exit.test.ts",
  "test/plugins/docker-driver.test.ts",
  "test/plugins/docker-gvisor.test.ts",
  "test/sdk/python/*.test.ts",
  "test/sdk/rewards/*-training.test.ts",
  "test/sdk/rewards/onnx-scorer.test.ts",
  "test/server/engines/external/torch-trainer-protocol.test.ts",
  "test/server/engines/external/torch-trainer-unittest.test.ts",
];

/** In one process but not a unit: loopback sockets, sandboxes (isolated-vm, esbuild), real training runs. */
export const INTEGRATION = [
  "test/bench/quality.test.ts",
  "test/environments/isolate.test.ts",
  "test/environments/appworld/episode.test.ts",
  "test/environments/appworld/stand-in-server.test.ts",
  "test/environments/werewolves/constrained.test.ts",
  "test/environments/werewolves/fresh.test.ts",
  "test/hub/dashboard/episode-list.test.ts",
  "test/hub/run/*.test.ts",
  "test/hub/store.test.ts",
  "test/hub/swarm/*.test.ts",
  "test/hub/train/crash-resume.test.ts",
  "test/hub/train/deterministic.test.ts",
  "test/hub/train/examples.test.ts",
  "test/hub/train/fault-soak.test.ts",
  "test/hub/train/group-integrity.test.ts",
  "test/hub/train/run-training.test.ts",
  "test/hub/train/storage-errors.test.ts",
  "test/plugins/list-tasks.test.ts",
  "test/plugins/shared-instance.test.ts",
  "test/plugins/supervisor.test.ts",
  "test/plugins/vm-*.test.ts",
  "test/sdk/framework-agnostic.test.ts",
  "test/sdk/rewards/judge.test.ts",
  "test/sdk/swarm-client.test.ts",
  "test/server/app/json-body.test.ts",
  "test/server/engines/embedded/*.test.ts",
  "test/server/engines/external/full-weight-sync.test.ts",
  "test/server/engines/external/openai-tokens-loop.test.ts",
  "test/server/engines/external/replicas.test.ts",
  "test/server/engines/external/trainer-protocol.test.ts",
  "test/server/engines/frozen.test.ts",
  "test/server/openai/malformed-requests.test.ts",
  "test/server/openai/request-options.test.ts",
  "test/server/openai/streaming.test.ts",
  "test/server/openai/structured-output.test.ts",
  "test/server/tokenizers/large-message.test.ts",
];
