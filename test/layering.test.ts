import { join } from "node:path";
import { cruise, type IViolation } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..");

/** The product's source folders: what the layering rules of `.dependency-cruiser.cjs` judge (never test/). */
const SOURCES = ["hub", "sdk", "server", "plugins", "environments", "errors"];

function describeViolation(v: IViolation): string {
  const path = v.cycle && v.cycle.length > 0 ? [v.from, ...v.cycle.map((c) => c.name)].join(" -> ") : `${v.from} -> ${v.to}`;
  return `${v.rule.name}: ${path}`;
}

describe("layering (.dependency-cruiser.cjs, the folder READMEs)", () => {
  it("no import breaks a folder's rule, and there are no import cycles", async () => {
    const options = await extractDepcruiseOptions(join(REPO, ".dependency-cruiser.cjs"));
    const result = await cruise(SOURCES, { ...options, baseDir: REPO }, {}, { tsConfig: extractTSConfig(join(REPO, "tsconfig.json")) });
    if (typeof result.output === "string") throw new Error("dependency-cruiser answered text, not a cruise result");
    const violations = result.output.summary.violations.map(describeViolation);
    expect(violations).toEqual([]);
    // The rules judge something: the folders were read, with their type-only imports.
    expect(result.output.summary.totalCruised).toBeGreaterThan(300);
  });
});
