import { execFileSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { extractTar, gzipTar, packTree, readTar, writeTar } from "../../hub/registry/index.ts";
import { removeTempDirs, tempDir } from "./helpers.ts";

// A path over ustar's 100-byte name field, which goes into the prefix field.
const DEEP = `d/${"e".repeat(60)}/${"f".repeat(60)}`;

function makePlugin(): string {
  const dir = tempDir("pack");
  mkdirSync(join(dir, "src", DEEP), { recursive: true });
  mkdirSync(join(dir, "node_modules", "x"), { recursive: true });
  writeFileSync(join(dir, "agentjet.env.json"), "{}");
  writeFileSync(join(dir, "src", "b.ts"), "b");
  writeFileSync(join(dir, "src", "a.ts"), "a");
  writeFileSync(join(dir, "src", DEEP, "long-path.txt"), "a path over 100 bytes");
  writeFileSync(join(dir, "node_modules", "x", "index.js"), "ignored");
  writeFileSync(join(dir, "old.tgz"), "ignored");
  return dir;
}

afterAll(removeTempDirs);

describe("packed content", () => {
  it("is reproducible: same folder, same hash, whatever the mtimes", () => {
    const dir = makePlugin();
    const first = packTree(dir);
    utimesSync(join(dir, "src", "a.ts"), new Date(2001, 1, 1), new Date(2001, 1, 1));
    expect(packTree(dir).sha256).toBe(first.sha256);
    writeFileSync(join(dir, "src", "a.ts"), "changed");
    expect(packTree(dir).sha256).not.toBe(first.sha256);
  });

  it("sorts entries and leaves out node_modules and tarballs", () => {
    const paths = readTar(packTree(makePlugin()).tar).map((e) => e.path);
    expect(paths).toEqual(["agentjet.env.json", "src", "src/a.ts", "src/b.ts", "src/d", `src/d/${"e".repeat(60)}`, `src/${DEEP}`, `src/${DEEP}/long-path.txt`]);
  });

  it("round-trips through extract, and system tar reads it", () => {
    const dir = makePlugin();
    const packed = packTree(dir);
    const out = tempDir("extract");
    extractTar(packed.tar, out);
    expect(packTree(out).sha256).toBe(packed.sha256);
    const tgz = join(out, "p.tgz");
    writeFileSync(tgz, gzipTar(packed.tar));
    const listing = execFileSync("tar", ["tzf", tgz], { encoding: "utf8" });
    expect(listing).toContain(`src/${DEEP}/long-path.txt`);
  });

  it("refuses entries that leave the target folder", () => {
    const evil = writeTar([{ path: "../escape.txt", type: "file", data: Buffer.from("x") }]);
    expect(() => extractTar(evil, tempDir("evil"))).toThrowError(expect.objectContaining({ code: "AJ_ERR_TARBALL_INVALID" }));
  });
});
