import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Command, EXIT } from "./command.ts";

const COMMANDS_DIR = join(import.meta.dirname, "commands");

/** Loads one command by name (`commands/<name>.ts`): a CLI start imports only what it runs. */
async function loadCommand(name: string): Promise<Command | undefined> {
  if (!/^[a-z][a-z-]*$/.test(name)) return undefined;
  const file = join(COMMANDS_DIR, `${name}.ts`);
  if (!existsSync(file)) return undefined;
  const mod = (await import(pathToFileURL(file).href)) as { command?: Command };
  return mod.command;
}

async function loadAllCommands(): Promise<Command[]> {
  const names = readdirSync(COMMANDS_DIR).filter((f) => f.endsWith(".ts")).map((f) => f.slice(0, -3)).sort();
  const commands = await Promise.all(names.map(loadCommand));
  return commands.filter((c): c is Command => c !== undefined);
}

async function usage(): Promise<string> {
  const commands = await loadAllCommands();
  const width = Math.max(4, ...commands.map((c) => c.name.length));
  return [
    "agentjet: train LLM agents with reinforcement learning",
    "",
    "Usage: agentjet <command> [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `agentjet <command> --help` (or `agentjet help <command>`) for a command's options;",
    "`agentjet --version` prints the version.",
  ].join("\n");
}

const [name, ...rest] = process.argv.slice(2);
if (!name) {
  // a usage error: the usage goes where errors go
  console.error(await usage());
  process.exit(EXIT.usage);
}
if (name === "--help" || name === "-h" || (name === "help" && rest.length === 0)) {
  console.log(await usage());
  process.exit(EXIT.ok);
}
if (name === "help") {
  // `agentjet help <command> [subcommand]` is `agentjet <command> [subcommand] --help`
  const [topic, ...sub] = rest;
  const command = await loadCommand(topic!);
  if (!command) {
    console.error(`agentjet: unknown command '${topic}'\n\n${await usage()}`);
    process.exit(EXIT.usage);
  }
  console.log(command.helpFor?.(sub) ?? command.help);
  process.exit(EXIT.ok);
}
if (name === "--version" || name === "-v") {
  const pkg = (await import(pathToFileURL(join(import.meta.dirname, "..", "..", "package.json")).href, { with: { type: "json" } })) as { default: { version: string } };
  console.log(pkg.default.version);
  process.exit(EXIT.ok);
}
const command = await loadCommand(name);
if (!command) {
  console.error(`agentjet: unknown command '${name}'\n\n${await usage()}`);
  process.exit(EXIT.usage);
}
if (rest.includes("--help") || rest.includes("-h")) {
  console.log(command.helpFor?.(rest) ?? command.help);
  process.exit(EXIT.ok);
}
process.exitCode = await command.run(rest);
