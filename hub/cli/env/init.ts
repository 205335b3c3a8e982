import { resolve } from "node:path";
import { EXIT } from "../command.ts";
import { type EnvIo, parse, UsageError } from "./io.ts";
import { writeScaffold } from "./scaffold.ts";

export const INIT_HELP = `agentjet env init <name> --kind vm|docker [options]

Scaffolds a new environment plugin in ./<name> (or --dir): agentjet.env.json, a typed entry
(src/index.ts, with a reference solve()), a tiny dataset (data/*.jsonl), a test, and for docker a
Dockerfile and src/main.ts. Then: agentjet env test ./<name>, agentjet env pack ./<name>.

Options:
  --kind vm|docker  the sandbox it runs in (default: vm)
  --dir <path>      where to write it (default: ./<name>)
  --json            print the result as JSON

Exit codes: 0, 1 the folder exists and is not empty, 2 usage.`;

const NAME = /^[a-z][a-z0-9-]{0,63}$/;

export async function runInit(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { kind: { type: "string", default: "vm" }, dir: { type: "string" } });
  const [name, ...extra] = positionals;
  if (!name || extra.length) throw new UsageError("usage: agentjet env init <name> --kind vm|docker");
  if (!NAME.test(name)) throw new UsageError(`'${name}' is not a valid name: lower-case letters, digits and '-', starting with a letter`);
  if (values.kind !== "vm" && values.kind !== "docker") throw new UsageError(`--kind must be vm or docker, got '${values.kind}'`);
  const dir = resolve(values.dir ?? name);
  const files = writeScaffold(dir, name, values.kind);
  io.result({ name, kind: values.kind, dir, files }, `created ${values.kind} environment '${name}' in ${dir}\n${files.map((f) => `  ${f}`).join("\n")}\nnext: agentjet env test ${dir}`);
  return EXIT.ok;
}
