import { writeOutputFile } from "../write-output.ts";
import { EXIT } from "../command.ts";
import { type EnvIo, parse, UsageError } from "./io.ts";
import { renderManifestDocs, renderProtocolDocs } from "./render-env-docs.ts";

export const DOCS_HELP = `agentjet env docs manifest|protocol [--out <file>]

Prints the reference of the plugin manifest (agentjet.env.json) or of the environment protocol (Markdown),
made from the zod schemas the host validates with. docs/environment-manifest.md and
docs/environment-protocol.md are these outputs.

Options:
  --out <file>  write to a file instead of standard output
  --json        print one JSON object: {"ok":true,"docs":"..."}, or with --out {"ok":true,"out":"<file>"}

Examples:
  agentjet env docs manifest --out docs/environment-manifest.md
  agentjet env docs protocol --out docs/environment-protocol.md`;

const RENDER = { manifest: renderManifestDocs, protocol: renderProtocolDocs } as const;

export async function runDocs(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { out: { type: "string" } });
  const [what, ...extra] = positionals;
  if ((what !== "manifest" && what !== "protocol") || extra.length) throw new UsageError("usage: agentjet env docs manifest|protocol [--out <file>]");
  const text = RENDER[what]();
  if (values.out) {
    writeOutputFile(values.out, text);
    io.progress(`env docs: wrote ${values.out}`);
    io.result({ out: values.out }, "");
  } else if (io.json) io.result({ docs: text }, "");
  else process.stdout.write(text);
  return EXIT.ok;
}
