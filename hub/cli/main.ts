import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Command, EXIT } from "./command.ts";

async function loadCommands(): Promise<Command[]> {
  const dir = join(import.meta.dirname, "commands");
  const files = readdirSync(dir).filter((f) => f.endsWith(".ts")).sort();
  const commands: Command[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { command?: Command };
    if (mod.command) commands.push(mod.command);
  }
  return commands;
}

function usage(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length), 4);
  return [
    "agentjet: train LLM agents with reinforcement learning",
    "",
    "Usage: agentjet <command> [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `agentjet <command> --help` for a command's options.",
  ].join("\n");
}

const commands = await loadCommands();
const [name, ...rest] = process.argv.slice(2);
if (!name || name === "--help" || name === "-h" || name === "help") {
  console.log(usage(commands));
  process.exit(name ? EXIT.ok : EXIT.usage);
}
if (name === "--version" || name === "-v") {
  const pkg = (await import(pathToFileURL(join(import.meta.dirname, "..", "..", "package.json")).href, { with: { type: "json" } })) as { default: { version: string } };
  console.log(pkg.default.version);
  process.exit(EXIT.ok);
}
const command = commands.find((c) => c.name === name);
if (!command) {
  console.error(`agentjet: unknown command '${name}'\n\n${usage(commands)}`);
  process.exit(EXIT.usage);
}
if (rest.includes("--help") || rest.includes("-h")) {
  console.log(command.help);
  process.exit(EXIT.ok);
}
process.exitCode = await command.run(rest);
