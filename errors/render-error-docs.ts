import { ERROR_GROUPS } from "./codes.ts";
import { EXIT } from "./exit-codes.ts";

/** `docs/errors.md`: every code of the registry, by area (`agentjet config errors`; a test keeps the file current). */
export function renderErrorDocs(): string {
  const lines = [
    "# Error codes",
    "",
    "<!-- Generated from errors/codes.json by `agentjet config errors --out docs/errors.md`; do not edit. -->",
    "",
    "Every error agentjet throws, answers or sends carries a stable `code`. HTTP errors answer in OpenAI's",
    "shape, `{ \"error\": { \"message\", \"type\", \"code\", \"param\" } }`; a command that fails prints the code",
    `(with \`--json\`, \`{"ok":false,"error":{"code","message"}}\`) and exits with the code's exit status, ${EXIT.failure} when`,
    `none is listed. Exit codes: ${EXIT.ok} ok, ${EXIT.failure} failure, ${EXIT.usage} usage, ${EXIT.notFound} not found, ${EXIT.integrity} integrity, ${EXIT.interrupted} interrupted.`,
  ];
  for (const group of ERROR_GROUPS) {
    lines.push("", `## ${group.title}`, "", "| code | HTTP | exit | meaning |", "|---|---|---|---|");
    for (const [code, info] of Object.entries(group.codes)) {
      lines.push(`| \`${code}\` | ${info.http ?? ""} | ${info.exit ?? ""} | ${info.meaning.replace(/\|/g, "\\|")} |`);
    }
  }
  return `${lines.join("\n")}\n`;
}
