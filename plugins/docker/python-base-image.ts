import { execFile } from "node:child_process";
import { cp, readdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { ImageBuildError } from "../errors.ts";
import { buildOnce, buildScratchImage, place, sharedLibraries } from "./scratch-image.ts";

const run = promisify(execFile);

/** The interpreter the Python base image carries: $AGENTJET_PYTHON, else the system's /usr/bin/python3. */
export function hostPython(): string {
  return process.env["AGENTJET_PYTHON"] || "/usr/bin/python3";
}

/** Parts of the standard library no environment needs in a sandbox (tests, GUIs, installers): 40 MiB less. */
const SKIPPED = new Set(["test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data", "site-packages", "dist-packages", "__pycache__"]);

/**
 * An offline base image for docker plugins written in Python, built once per interpreter version: FROM
 * scratch with the host's python3, its standard library (under the same path, so it finds its prefix),
 * the shared libraries it and its extension modules link, and the sandbox user. No shell, no pip: plugins
 * COPY pure-Python code in. Passed to Dockerfiles as the build arg AGENTJET_PYTHON_BASE. Returns its tag.
 */
export const ensurePythonBaseImage = buildOnce(buildBase);

async function describePython(python: string): Promise<{ version: string; stdlib: string; dynload: string; executable: string }> {
  const script = "import sys, sysconfig, json; p = sysconfig.get_paths(); print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], 'stdlib': p['stdlib'], 'dynload': sysconfig.get_config_var('DESTSHARED') or '', 'executable': sys.executable}))";
  try {
    const { stdout } = await run(python, ["-c", script]);
    return JSON.parse(stdout) as { version: string; stdlib: string; dynload: string; executable: string };
  } catch (err) {
    throw new ImageBuildError(`the Python base image needs a host python3 (${python}; set AGENTJET_PYTHON to another): ${(err as Error).message}`, err);
  }
}

async function buildBase(onProgress?: (line: string) => void): Promise<string> {
  const py = await describePython(hostPython());
  const tag = `agentjet/python-base:${py.version}`;
  return buildScratchImage({
    tag,
    async fill(rootfs) {
      onProgress?.(`building ${tag} from ${py.executable} (once per Python version)`);
      const binary = await realpath(py.executable);
      await place(binary, join(rootfs, py.executable));
      await cp(py.stdlib, join(rootfs, py.stdlib), { recursive: true, dereference: true, filter: (src) => !SKIPPED.has(src.split("/").pop() ?? "") });
      const linked = [binary];
      if (py.dynload) {
        await cp(py.dynload, join(rootfs, py.dynload), { recursive: true, dereference: true });
        for (const f of await readdir(py.dynload)) if (f.endsWith(".so")) linked.push(join(py.dynload, f));
      }
      const libs = new Set<string>();
      for (const file of linked) for (const lib of await sharedLibraries(file)) libs.add(lib);
      for (const lib of libs) await place(lib, join(rootfs, lib));
    },
    env: "HOME=/tmp PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1",
    entrypoint: py.executable,
    onProgress,
  });
}
