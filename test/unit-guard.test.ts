import childProcess from "node:child_process";
import net from "node:net";
import { describe, expect, it } from "vitest";

// Runs in the `unit` project, under test/helpers/unit-guard.ts.
describe("the unit project's guard", () => {
  it("refuses a child process or a socket, naming the rule", () => {
    expect(() => childProcess.spawn("/bin/true")).toThrow(/a unit test may not start a child process \(spawn\)/);
    expect(() => childProcess.execFileSync("node", ["-e", "0"])).toThrow(/execFileSync/);
    expect(() => net.createServer().listen(0)).toThrow(/listen on a socket/);
  });

  it("lets esbuild start its service, which bundles a worker thread's module on a fresh machine", () => {
    const child = childProcess.spawnSync("/nonexistent/bin/esbuild", ["--version"]);
    expect(child.error).toMatchObject({ code: "ENOENT" }); // the real spawnSync ran (and found no such binary)
  });
});
