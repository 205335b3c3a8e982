import { describe, expect, it } from "vitest";
import { ManifestSchema } from "../../sdk/env/manifest.ts";

describe("manifest", () => {
  it("names the offending field", () => {
    const r = ManifestSchema.safeParse({ name: "Bad Name", version: "1", kind: "vm" });
    expect(r.success).toBe(false);
    const paths = r.error!.issues.map((i) => i.path.join("."));
    expect(paths).toContain("name");
    expect(paths).toContain("version");
  });
});
