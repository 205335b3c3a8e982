import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderManifestDocs, renderProtocolDocs } from "../../hub/cli/env/render-env-docs.ts";
import { REPO } from "./helpers.ts";

describe("docs/environment-*.md", () => {
  it("docs/environment-manifest.md is what `agentjet env docs manifest` prints (regenerate: agentjet env docs manifest --out docs/environment-manifest.md)", () => {
    const text = readFileSync(join(REPO, "docs", "environment-manifest.md"), "utf8");
    expect(text).toBe(renderManifestDocs());
    // What a contributor had to read the source for: the split forms, the defaults, reusable, the reward range, docker fields.
    for (const needle of ["`{ \"generate\": N }`", "| `limits.memoryMb` | integer | `128` |", "| `limits.callTimeoutMs` | integer | `5000` |", "`reusable`", "`reward.max`", "`docker.image`", "AGENTJET_NODE_BASE"]) {
      expect(text).toContain(needle);
    }
  });

  it("docs/environment-protocol.md is what `agentjet env docs protocol` prints (regenerate: agentjet env docs protocol --out docs/environment-protocol.md)", () => {
    const text = readFileSync(join(REPO, "docs", "environment-protocol.md"), "utf8");
    expect(text).toBe(renderProtocolDocs());
    expect(text).toContain("A multi-turn environment answers `done: false` with new observations");
    for (const op of ["reset", "step", "tasks", "solve", "close", "ping"]) expect(text).toContain(`| \`${op}\` |`);
  });
});
