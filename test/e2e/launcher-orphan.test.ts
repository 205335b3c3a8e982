import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO, removeTempDirs, tempDir } from "../hub/helpers.ts";

afterEach(removeTempDirs);

/** Running (a zombie left to an init that does not reap it counts as gone). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
};

describe("bin/agentjet.js, the launcher that re-executes the CLI", () => {
  it("its re-executed child stops when the launcher is killed outright (kill -9), instead of running on as an orphan", { timeout: 60_000 }, async () => {
    const runDir = join(tempDir("launcher-orphan"), "run");
    const launcher = spawn(process.execPath, [join(REPO, "bin", "agentjet.js"), "serve", "--port", "0", "--run-dir", runDir], {
      cwd: REPO,
      env: { ...process.env, AGENTJET_CHILD: "", AGENTJET_ADMIN_TOKEN: "", AGENTJET_CLIENT_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    // The server (the re-executed child) logs its own pid with every line once it listens.
    const serverPid = await new Promise<number>((resolve, reject) => {
      launcher.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        const line = stdout.split("\n").find((l) => l.includes("agentjet service listening"));
        if (line) resolve((JSON.parse(line) as { pid: number }).pid);
      });
      launcher.on("exit", () => reject(new Error(`launcher exited before the server listened:\n${stdout}`)));
    });
    try {
      expect(serverPid).not.toBe(launcher.pid);
      launcher.kill("SIGKILL");
      const deadline = Date.now() + 15_000;
      while (alive(serverPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(alive(serverPid)).toBe(false);
    } finally {
      if (alive(serverPid)) process.kill(serverPid, "SIGKILL");
    }
  });
});
