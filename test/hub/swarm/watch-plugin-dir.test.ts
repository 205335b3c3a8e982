import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ClientEnvSource } from "../../../hub/swarm/client-environments.ts";
import { hashPluginDir } from "../../../hub/swarm/hash-plugin-dir.ts";
import { reloadLocalPlugins } from "../../../hub/swarm/reload-local-plugins.ts";
import { watchPluginDir } from "../../../hub/swarm/watch-plugin-dir.ts";
import type { EnvironmentRuntime } from "../../../plugins/runtime.ts";
import { ManifestSchema } from "../../../sdk/env/manifest.ts";
import { type ClientEnvironment, SwarmClient } from "../../../sdk/swarm/client.ts";
import { FIXTURE_ENVS } from "../../e2e/fixtures/fixture-envs.ts";

const dirs: string[] = [];
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function plugin(): { dir: string; src: string } {
  const dir = mkdtempSync(join(tmpdir(), "agentjet-watch-"));
  dirs.push(dir);
  mkdirSync(join(dir, "src"));
  const src = join(dir, "src", "index.ts");
  writeFileSync(src, "export const reward = 1;\n");
  return { dir, src };
}

/** An editor's replacing save: the new content goes to a temp file that is renamed over the original (sed -i, safe-write). */
function replacingSave(file: string, content: string): void {
  const tmp = `${file}.tmp-${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("watchPluginDir", () => {
  it("keeps seeing a file after a replacing save (rename over it), and files in new folders", async () => {
    const { dir, src } = plugin();
    let changes = 0;
    const w = watchPluginDir(dir, () => (changes += 1), { debounceMs: 20 });
    closers.push(() => w.close());
    replacingSave(src, "export const reward = 0.5;\n");
    await until(() => changes >= 1, "the replacing save");
    const afterRename = changes;
    // The regression: a watch on the file itself goes deaf here, after its inode was replaced.
    appendFileSync(src, "// edited in place after the rename\n");
    await until(() => changes > afterRename, "an in-place write after the replacing save");
    const before = changes;
    mkdirSync(join(dir, "src", "lib"));
    await until(() => changes > before, "the new folder");
    const beforeNested = changes;
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync(join(dir, "src", "lib", "util.ts"), "export const x = 1;\n");
    await until(() => changes > beforeNested, "a file in the new folder");
  });

  it("ignores agentjet's own outputs and node_modules", async () => {
    const { dir, src } = plugin();
    let changes = 0;
    const w = watchPluginDir(dir, () => (changes += 1), { debounceMs: 20 });
    closers.push(() => w.close());
    mkdirSync(join(dir, ".agentjet"));
    writeFileSync(join(dir, ".agentjet", "bundle.js"), "x");
    mkdirSync(join(dir, "node_modules"));
    // A real edit afterwards is seen, and is the only change counted.
    writeFileSync(src, "export const reward = 2;\n");
    await until(() => changes >= 1, "the real edit");
    await new Promise((r) => setTimeout(r, 100));
    expect(changes).toBe(1);
  });
});

describe("reloadLocalPlugins", () => {
  it("re-opens a plugin after a replacing save, announces the new hash, closes the old build, and skips saves that change nothing", async () => {
    const { dir, src } = plugin();
    const manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(FIXTURE_ENVS, "count-up", "agentjet.env.json"), "utf8")));
    const closed: string[] = [];
    const open = async (): Promise<ClientEnvironment> => {
      const hash = await hashPluginDir(dir);
      const runtime = { manifest, close: async () => void closed.push(hash) } as unknown as EnvironmentRuntime;
      return { runtime, hash, dev: true };
    };
    const source: ClientEnvSource = { name: "count-up", dir, manifest, local: true, open };
    const first = await open();
    const opened = new Map([["count-up", first]]);
    const client = new SwarmClient({ url: "http://127.0.0.1:9", environments: [first] });
    const reloads: string[] = [];
    const lines: string[] = [];
    const r = reloadLocalPlugins({ sources: [source], opened, client, log: (l) => lines.push(l), debounceMs: 20, onReload: (_n, e) => reloads.push(e.hash) });
    closers.push(() => r.close());

    replacingSave(src, "export const reward = 0.5;\n");
    await until(() => reloads.length === 1, "the reload after the replacing save");
    expect(reloads[0]).toBe(await hashPluginDir(dir));
    expect(reloads[0]).not.toBe(first.hash);
    expect(client.announcements()).toEqual([{ name: "count-up", version: "1.0.0", hash: reloads[0], dev: true }]);
    await until(() => closed.includes(first.hash), "the old build closed");
    expect(lines.join("\n")).toContain(`code hash ${reloads[0]!.slice(0, 12)}`);

    // Saving the same bytes again (a replacing save too) reloads nothing; a real edit after it does.
    replacingSave(src, "export const reward = 0.5;\n");
    await new Promise((r) => setTimeout(r, 200));
    expect(reloads).toHaveLength(1);
    appendFileSync(src, "// more\n");
    await until(() => reloads.length === 2, "the reload after an in-place edit");
  });
});
