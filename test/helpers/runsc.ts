import { describe } from "vitest";
import { containerRuntimeRegistered, dockerAvailable, ensureNodeBaseImage } from "../../plugins/index.ts";
import { dockerClient } from "../../plugins/docker/docker-client.ts";

/** Why gVisor cannot run docker plugins here, or null when it can: asked once per test file. */
async function whyNoRunsc(): Promise<string | null> {
  if (!(await dockerAvailable(3_000))) return "no Docker engine answers";
  if (!(await containerRuntimeRegistered("runsc"))) {
    return 'the Docker engine has no "runsc" runtime (install the Debian package runsc and register it in /etc/docker/daemon.json; .ci/run does both)';
  }
  // Registered is not enough: gVisor may lack what it needs in this machine (capabilities, a platform).
  const container = await dockerClient().createContainer({
    Image: await ensureNodeBaseImage(),
    Cmd: ["-e", "0"],
    HostConfig: { Runtime: "runsc", NetworkMode: "none", AutoRemove: false },
  });
  try {
    await container.start();
    const r = (await container.wait()) as { StatusCode?: number };
    return r.StatusCode === 0 ? null : `a container under runsc exited with ${r.StatusCode}`;
  } catch (err) {
    return `a container under runsc does not start: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

const reason = await whyNoRunsc();

/** A describe block for tests under gVisor: skips loudly, with the reason, where runsc cannot run. */
export function describeRunsc(name: string, fn: () => void): void {
  if (reason === null) {
    describe(name, fn);
    return;
  }
  console.warn(`\n!!! SKIPPED "${name}": ${reason}.\n`);
  describe.skip(name, fn);
}
