import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderConfigDocs } from "../../../server/config/config-docs.ts";
import { runConfigJsonSchema } from "../../../server/config/json-schema.ts";

const REPO = join(import.meta.dirname, "..", "..", "..");

describe("docs/run-config.md", () => {
  it("is what `agentjet config docs` prints (regenerate: agentjet config docs --out docs/run-config.md)", () => {
    expect(readFileSync(join(REPO, "docs", "run-config.md"), "utf8")).toBe(renderConfigDocs(runConfigJsonSchema()));
  });

  it("describes every field that is not a section", () => {
    const undocumented = renderConfigDocs(runConfigJsonSchema())
      .split("\n")
      .filter((row) => row.startsWith("| `") && row.endsWith("|  |"))
      .filter((row) => !row.includes(".kind` | \"") && !/^\| `[^`]+` \| (object|map of object|object\[\]|object \\\| object) \|/.test(row))
      .map((row) => row.split("|")[1]!.trim());
    expect(undocumented).toEqual([]);
  });
});
