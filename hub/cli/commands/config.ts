import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { runConfigJsonSchema } from "../../../server/config/json-schema.ts";
import { type Command, EXIT } from "../command.ts";
import { renderConfigDocs } from "../../../server/config/config-docs.ts";

export const command: Command = {
  name: "config",
  summary: "Run-config tools: `config schema` prints the JSON Schema for editors",
  help: `Usage: agentjet config schema [--out <file>]
       agentjet config docs [--out <file>]

schema  Prints the JSON Schema of the run config (YAML), so editors can complete and check configs.
docs    Prints the reference of every run-config field (Markdown), made from the same schema.
With VS Code's YAML extension, put this first in a config:
  # yaml-language-server: $schema=./run-config.schema.json

Options:
  --out <file>  Write the schema to a file instead of standard output
  --help        Show this help`,
  async run(argv) {
    const { values, positionals } = parseArgs({ args: argv, options: { out: { type: "string" } }, allowPositionals: true });
    const what = positionals[0];
    if (what !== "schema" && what !== "docs") {
      console.error(`agentjet config: expected 'schema' or 'docs'\n\n${this.help}`);
      return EXIT.usage;
    }
    const text = what === "schema" ? `${JSON.stringify(runConfigJsonSchema(), null, 2)}\n` : renderConfigDocs(runConfigJsonSchema());
    if (values.out) {
      writeFileSync(values.out, text);
      console.error(`config: wrote ${values.out}`);
    } else process.stdout.write(text);
    return EXIT.ok;
  },
};
