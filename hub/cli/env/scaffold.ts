import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { AgentJetError } from "../../../errors/index.ts";
import { REPO_ROOT } from "../../registry/load-registry.ts";
import { linkAgentjet } from "../../store/link-agentjet.ts";

/** The versions this installation itself is checked with, so a scaffold type-checks the same way. */
function devVersions(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { devDependencies?: Record<string, string> };
  const dev = pkg.devDependencies ?? {};
  return { typescript: dev["typescript"] ?? "5.9", "@types/node": dev["@types/node"] ?? "^20.19.0", vitest: dev["vitest"] ?? "^4.1.0" };
}

/**
 * The plugin's package.json. `agentjet` is a dev dependency on this installation (`file:`), so `npm install`
 * keeps the link that gives the SDK's types; installs use `--omit=dev`, so the packed plugin never needs it.
 */
function packageJson(name: string, dir: string): string {
  const pkg = {
    name: `agentjet-env-${name}`,
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: { typecheck: "tsc", test: "vitest run" },
    dependencies: {},
    devDependencies: { agentjet: `file:${relative(dir, REPO_ROOT) || "."}`, ...devVersions() },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function tsconfig(kind: "vm" | "docker"): string {
  const config = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib: ["ES2023"],
      // vm plugins run in an isolate without Node APIs: no Node types, so using one is a type error.
      types: kind === "vm" ? [] : ["node"],
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      verbatimModuleSyntax: true,
      skipLibCheck: true,
    },
    include: ["src", "test"],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The files `agentjet env init` writes: a manifest, a typed entry, a tiny dataset and a test. */
export function scaffoldFiles(name: string, kind: "vm" | "docker", dir: string): Record<string, string> {
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
    "package.json": packageJson(name, dir),
    "tsconfig.json": tsconfig(kind),
    ".gitignore": "node_modules/\n*.tgz\n",
    "data/train.jsonl": words(["agent", "reward", "sandbox", "policy"], "train"),
    "data/test.jsonl": words(["episode", "token"], "test"),
    "src/index.ts": ENTRY,
    "test/environment.test.ts": TEST,
    "README.md": readme(name, kind),
  };
  if (kind === "docker") {
    files["src/main.ts"] = MAIN;
    files["Dockerfile"] = DOCKERFILE;
  }
  return files;
}

function readme(name: string, kind: "vm" | "docker"): string {
  return [
    `# ${name}`,
    "",
    `An agentjet environment (kind \`${kind}\`). The agent is asked to reverse a word; reward 1 when it does.`,
    "",
    "- `npm install` installs the dev tools (TypeScript, vitest, and agentjet's types) and your dependencies;",
    "  add one with `npm install <package>`.",
    "- `npx tsc` type-checks; `npx vitest run` runs the unit test.",
    "- `agentjet env test .` runs the conformance suite.",
    "- `agentjet env pack .` makes the tarball and the registry entry for a pull request.",
    "",
    "The manifest's fields: docs/environment-manifest.md; the protocol: docs/environment-protocol.md (in agentjet).",
    "",
  ].join("\n");
}

const ENTRY = `import { defineEnvironment, type EpisodeDynamics, type Task, type Turn } from "agentjet/sdk/env";

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
export const environment = defineEnvironment({
  createEpisode,
  // The reference agent the conformance suite (\`agentjet env test\`) uses: the action that earns reward 1.
  solve: ({ task }) => reverse(wordOf(task) ?? ""),
});
`;

const MAIN = `import { serveStdio } from "agentjet/sdk/env/serve";
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

export class ScaffoldDirNotEmptyError extends AgentJetError {
  constructor(message: string) {
    super("AJ_ERR_SCAFFOLD_DIR_NOT_EMPTY", message);
  }
}

export function writeScaffold(dir: string, name: string, kind: "vm" | "docker"): string[] {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new ScaffoldDirNotEmptyError(`${dir} exists and is not empty`);
  const files = scaffoldFiles(name, kind, dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  linkAgentjet(dir);
  return Object.keys(files).sort();
}
