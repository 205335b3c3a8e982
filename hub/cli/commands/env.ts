import { type Command, EXIT } from "../command.ts";
import { ADD_HELP, INSTALL_HELP, runAdd, runInstall } from "../env/add.ts";
import { DOCS_HELP, runDocs } from "../env/docs.ts";
import { INIT_HELP, runInit } from "../env/init.ts";
import { createIo, type EnvIo, reportError, UsageError } from "../env/io.ts";
import { INFO_HELP, LIST_HELP, runInfo, runList } from "../env/list.ts";
import { PACK_HELP, runPack } from "../env/pack.ts";
import { REMOVE_HELP, runRemove, runUpdate, UPDATE_HELP } from "../env/remove.ts";
import { runTest, TEST_HELP } from "../env/test.ts";

interface Subcommand {
  summary: string;
  help: string;
  run(argv: string[], io: EnvIo): Promise<number>;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  add: { summary: "install an environment and pin it in agentjet.lock", help: ADD_HELP, run: runAdd },
  install: { summary: "install everything agentjet.lock pins", help: INSTALL_HELP, run: runInstall },
  list: { summary: "installed and available environments, with versions", help: LIST_HELP, run: runList },
  info: { summary: "an environment's registry entry and install", help: INFO_HELP, run: runInfo },
  remove: { summary: "uninstall an environment", help: REMOVE_HELP, run: runRemove },
  update: { summary: "install the newest version of an installed environment", help: UPDATE_HELP, run: runUpdate },
  init: { summary: "scaffold a new environment plugin", help: INIT_HELP, run: runInit },
  test: { summary: "run the conformance suite on a plugin", help: TEST_HELP, run: runTest },
  pack: { summary: "pack a plugin and print its registry entry", help: PACK_HELP, run: runPack },
  docs: { summary: "print the manifest or protocol reference (Markdown)", help: DOCS_HELP, run: runDocs },
};

/** The subcommand of this name; own keys only (`env constructor` is no subcommand). */
const subcommand = (name: string | undefined): Subcommand | undefined => (name !== undefined && Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined);

const HELP = [
  "agentjet env <subcommand> [options]",
  "",
  "The environment hub: install, inspect, scaffold, test and pack environment plugins.",
  "",
  "Subcommands:",
  ...Object.entries(SUBCOMMANDS).map(([n, s]) => `  ${n.padEnd(8)}  ${s.summary}`),
  "",
  "Every subcommand takes --help and --json. Exit codes: 0 ok, 1 failure, 2 usage, 3 not found,",
  "4 integrity (sha256 mismatch).",
  "",
  "Examples:",
  "  agentjet env add aime --data ../shared/data/aime-2024.jsonl",
  "  agentjet env init my-env --kind vm && agentjet env test ./my-env && agentjet env pack ./my-env",
].join("\n");

export const command: Command = {
  name: "env",
  summary: "Manage environment plugins (add, install, list, info, remove, update, init, test, pack, docs)",
  help: HELP,
  helpFor: (argv) => subcommand(argv[0])?.help ?? HELP,
  async run(argv) {
    const [name, ...rest] = argv;
    const sub = subcommand(name);
    if (!sub) {
      const exit = reportError(createIo(argv.includes("--json")), new UsageError(name && !name.startsWith("-") ? `unknown subcommand '${name}'` : "missing subcommand (agentjet env <subcommand> [options])"));
      process.stderr.write(`\n${HELP}\n`);
      return exit;
    }
    if (rest.includes("--help") || rest.includes("-h")) {
      process.stdout.write(`${sub.help}\n`);
      return EXIT.ok;
    }
    const io = createIo(rest.includes("--json"));
    try {
      return await sub.run(rest, io);
    } catch (err) {
      return reportError(io, err);
    }
  },
};
