import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { linkAgentjet } from "../../store/link-agentjet.ts";

/** The files `agentjet env init` writes: a manifest, a typed entry, a tiny dataset and a test. */
export function scaffoldFiles(name: string, kind: "vm" | "docker"): Record<string, string> {
  const manifest = {
    name,
    version: "0.1.0",
    description: `${name}: reverse a word (a starting point; replace with your environment).`,
    license: "Apache-2.0",
    kind,
    entry: kind === "vm" ? "src/index.ts" : "src/main.ts",
    agents: [{ id: "solver", role: "solver" }],
    splits: { train: { file: "data/train.jsonl" }, test: { file: "data/test.jsonl" } },
    limits: { memoryMb: 64, callTimeoutMs: 2000 },
    reward: { min: 0, max: 1 },
    agentjet: "^0.1.0",
    ...(kind === "docker" ? { docker: { dockerfile: "Dockerfile", network: "none" } } : {}),
  };
  const words = (ws: string[], split: string) => ws.map((w, i) => JSON.stringify({ id: `${split}-${i}`, split, data: { word: w } })).join("\n") + "\n";
  const files: Record<string, string> = {
    "agentjet.env.json": `${JSON.stringify(manifest, null, 2)}\n`,
    "package.json": `${JSON.stringify({ name: `agentjet-env-${name}`, version: "0.1.0", private: true, type: "module", dependencies: {} }, null, 2)}\n`,
    "data/train.jsonl": words(["agent", "reward", "sandbox", "policy"], "train"),
    "data/test.jsonl": words(["episode", "token"], "test"),
    "src/index.ts": ENTRY,
    "test/environment.test.ts": TEST,
    "README.md": `# ${name}\n\nAn agentjet environment (kind \`${kind}\`). The agent is asked to reverse a word; reward 1 when it does.\n\n- \`agentjet env test .\` runs the conformance suite.\n- \`agentjet env pack .\` makes the tarball and the registry entry for a pull request.\n`,
  };
  if (kind === "docker") {
    files["src/main.ts"] = MAIN;
    files["Dockerfile"] = DOCKERFILE;
  }
  return files;
}

const ENTRY = `import type { EnvironmentDefinition, EpisodeDynamics } from "agentjet/sdk/env/define-environment.ts";
import type { Task, Turn } from "agentjet/sdk/env/protocol.ts";

const AGENT = "solver";

function wordOf(task: Task): string | undefined {
  const word = (task.data as { word?: unknown } | null)?.word;
  return typeof word === "string" ? word : undefined;
}

const reverse = (word: string): string => [...word].reverse().join("");

function createEpisode(): EpisodeDynamics {
  let word: string | undefined;
  return {
    reset({ task }): Turn {
      word = wordOf(task);
      if (word === undefined) return { observations: {}, done: true, rewards: { [AGENT]: 0 }, info: { error: "task has no word" } };
      return { observations: { [AGENT]: { messages: [{ role: "user", content: \`Reverse the word "\${word}". Reply with the reversed word only.\` }] } }, done: false };
    },
    step({ actions }): Turn {
      const answer = (actions[AGENT] ?? "").trim().toLowerCase();
      const correct = word !== undefined && answer === reverse(word);
      return { observations: {}, done: true, rewards: { [AGENT]: correct ? 1 : 0 }, info: { correct } };
    },
  };
}

/** The plugin's entry: the sandbox calls it through the agentjet environment protocol. */
export const environment: EnvironmentDefinition = {
  createEpisode,
  // The reference agent the conformance suite (\`agentjet env test\`) uses: the action that earns reward 1.
  solve: ({ task }) => reverse(wordOf(task) ?? ""),
};
`;

const MAIN = `import { serveStdio } from "agentjet/sdk/env/serve-stdio.ts";
import { environment } from "./index.ts";

// The container's entry: serve the environment protocol on stdin/stdout.
serveStdio(environment);
`;

const DOCKERFILE = `# Built offline: AGENTJET_NODE_BASE is a local FROM-scratch image with Node, made by agentjet.
ARG AGENTJET_NODE_BASE
FROM \${AGENTJET_NODE_BASE}
# agentjet bundles the manifest's entry (with its dependencies) into agentjet/entry.mjs before building.
COPY agentjet/entry.mjs /app/entry.mjs
CMD ["/app/entry.mjs"]
`;

const TEST = `import { describe, expect, it } from "vitest";
import { environment } from "../src/index.ts";

const task = { id: "t", split: "train", data: { word: "agent" } };

describe("environment", () => {
  it("rewards the reversed word", async () => {
    const episode = environment.createEpisode();
    const first = await episode.reset({ task, seed: 0, builtinAgents: [] });
    expect(first.done).toBe(false);
    const last = await episode.step({ actions: { solver: "tnega" } });
    expect(last).toMatchObject({ done: true, rewards: { solver: 1 } });
  });

  it("gives 0 for a wrong answer", async () => {
    const episode = environment.createEpisode();
    await episode.reset({ task, seed: 0, builtinAgents: [] });
    expect((await episode.step({ actions: { solver: "agent" } })).rewards).toEqual({ solver: 0 });
  });
});
`;

export function writeScaffold(dir: string, name: string, kind: "vm" | "docker"): string[] {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} exists and is not empty`);
  const files = scaffoldFiles(name, kind);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  linkAgentjet(dir);
  return Object.keys(files).sort();
}
