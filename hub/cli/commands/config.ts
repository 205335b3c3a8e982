import { parseArgs } from "node:util";
import { renderConfigDocs, runConfigJsonSchema } from "../../../server/config/index.ts";
import { type Command, EXIT, exitCodeFor } from "../command.ts";
import { renderErrorDocs } from "../../../errors/index.ts";
import { OutputUnwritableError, writeOutputFile } from "../write-output.ts";

export const command: Command = {
  name: "config",
  summary: "References: the run config's JSON Schema and docs, every error code (`config errors`)",
  help: `Usage: agentjet config schema [--out <file>]
       agentjet config docs [--out <file>]
       agentjet config errors [--out <file>]

schema  Prints the JSON Schema of the run config (YAML), so editors can complete and check configs.
docs    Prints the reference of every run-config field (Markdown), made from the same schema.
errors  Prints every error code with its meaning, HTTP status and exit code (Markdown, docs/errors.md).
With VS Code's YAML extension, put this first in a config:
  # yaml-language-server: $schema=./run-config.schema.json

Options:
  --out <file>  Write the output (schema, docs or errors) to a file instead of standard output
  --json        Print one JSON object: {"ok":true,"schema":{...}}, {"ok":true,"docs":"..."} (docs, errors) or, with
                --out, {"ok":true,"out":"<file>"}; an error: {"ok":false,"error":{"code","message"}}
  --help        Show this help

Exit codes: 0 ok, 1 the --out file cannot be written, 2 usage.`,
  async run(argv) {
    const json = argv.includes("--json");
    const fail = (message: string, code = "AJ_ERR_USAGE"): number => {
      console.error(`agentjet config: ${message}`);
      if (json) console.log(JSON.stringify({ ok: false, error: { code, message: message.split("\n\n")[0] } }));
      return exitCodeFor(code);
    };
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: { out: { type: "string" }, json: { type: "boolean", default: false } }, allowPositionals: true });
    } catch (err) {
      return fail(`${(err as Error).message}\n\n${this.help}`);
    }
    const { values, positionals } = parsed;
    const [what, ...extra] = positionals;
    if (what !== "schema" && what !== "docs" && what !== "errors") {
      return fail(`expected 'schema', 'docs' or 'errors'${what === undefined ? "" : `, got '${what}'`}\n\n${this.help}`);
    }
    if (extra.length > 0) return fail(`config ${what} takes no arguments, got ${extra.map((p) => `'${p}'`).join(", ")}\n\n${this.help}`);
    const text =
      what === "schema" ? `${JSON.stringify(runConfigJsonSchema(), null, 2)}\n` : what === "docs" ? renderConfigDocs(runConfigJsonSchema()) : renderErrorDocs();
    if (values.out) {
      try {
        writeOutputFile(values.out, text);
      } catch (err) {
        if (err instanceof OutputUnwritableError) return fail(err.message, err.code);
        throw err;
      }
      console.error(`config: wrote ${values.out}`);
      if (json) console.log(JSON.stringify({ ok: true, out: values.out }));
    } else if (json) console.log(JSON.stringify(what === "schema" ? { ok: true, schema: runConfigJsonSchema() } : { ok: true, docs: text }));
    else process.stdout.write(text);
    return EXIT.ok;
  },
};
