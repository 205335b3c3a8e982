import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { EXIT } from "../command.ts";
import { writeOutputFile } from "../write-output.ts";
import { gzipTar, packTree } from "../../registry/pack-tree.ts";
import { parseRegistry } from "../../registry/load-registry.ts";
import type { RegistryEnvironment, Source } from "../../registry/schema.ts";
import { stableJson } from "../../store/lockfile.ts";
import { readManifest } from "../../store/read-manifest.ts";
import { type EnvIo, parse, UsageError } from "./io.ts";

export const PACK_HELP = `agentjet env pack <path> [options]

Packs a plugin folder into <name>-<version>.tgz (the canonical tar: sorted entries, fixed owners, times
and modes, no node_modules) and prints the registry entry, with its sha256, to add to registry.json in a
pull request.

Two hashes are printed. The content sha256 is of the canonical uncompressed tar: the same folder gives it
on every machine whatever the compression, and it is what registry.json, agentjet.lock and
\`env add --sha256\` pin. The tarball's file sha256 (what \`sha256sum <file>.tgz\` prints) depends on the
gzip bytes; \`env add --source <file>.tgz --sha256\` accepts it too, for that file only.

Options:
  --out <dir>                where to write the tarball (default: the working directory)
  --source-url <url>         the source the entry names (default: the tarball's path; with
                             --write-registry, the plugin folder, relative to the registry file)
  --tags <a,b>               tags for the entry
  --write-registry <file>    add or update the entry in this registry file (sources stay relative to it)
  --json                     print the result as JSON

Exit codes: 0, 1 the folder is not a valid plugin, or the tarball (or --write-registry file) cannot be written.`;

export async function runPack(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    out: { type: "string" },
    "source-url": { type: "string" },
    tags: { type: "string" },
    "write-registry": { type: "string" },
  });
  const [path, ...extra] = positionals;
  if (!path || extra.length) throw new UsageError("usage: agentjet env pack <path>");
  const dir = resolve(path);
  const manifest = readManifest(dir);
  const packed = packTree(dir);
  const tarball = join(resolve(values.out ?? "."), `${manifest.name}-${manifest.version}.tgz`);
  const gz = gzipTar(packed.tar);
  writeOutputFile(tarball, gz);
  const fileSha256 = createHash("sha256").update(gz).digest("hex");
  const registryFile = values["write-registry"] ? resolve(values["write-registry"]) : undefined;
  const base = registryFile ? resolve(registryFile, "..") : undefined;
  const source: Source = values["source-url"]
    ? { type: "tarball", url: values["source-url"] }
    : registryFile && base
      ? { type: "path", path: relative(base, dir) || "." }
      : { type: "tarball", url: tarball };
  const version = { source, kind: manifest.kind, sha256: packed.sha256, agentjet: manifest.agentjet };
  const entry: RegistryEnvironment = {
    description: manifest.description,
    tags: values.tags ? values.tags.split(",").map((t) => t.trim()).filter(Boolean) : [],
    license: manifest.license,
    versions: { [manifest.version]: version },
  };
  if (registryFile) {
    const registry = existsSync(registryFile) ? parseRegistry(readFileSync(registryFile, "utf8"), registryFile) : { environments: {} };
    const prior = registry.environments[manifest.name];
    registry.environments[manifest.name] = prior
      ? {
          ...prior,
          description: manifest.description,
          license: manifest.license,
          // --tags replaces the entry's tags; without it they stay
          ...(values.tags !== undefined ? { tags: entry.tags } : {}),
          versions: { ...prior.versions, [manifest.version]: version },
        }
      : entry;
    writeOutputFile(registryFile, `${JSON.stringify(registry, null, 2)}\n`);
  }
  const snippet = stableJson({ [manifest.name]: entry });
  io.result(
    { name: manifest.name, version: manifest.version, kind: manifest.kind, sha256: packed.sha256, tarballSha256: fileSha256, files: packed.files, tarball, entry, ...(registryFile ? { registry: registryFile } : {}) },
    `packed ${manifest.name}@${manifest.version} (${packed.files} files) -> ${basename(tarball)}\n` +
      `content sha256 ${packed.sha256}  (of the canonical uncompressed tar; what registry.json and --sha256 pin)\n` +
      `tarball sha256 ${fileSha256}  (of ${basename(tarball)}'s gzip bytes, as sha256sum prints; --sha256 accepts it for this file)\n` +
      `${registryFile ? `updated ${registryFile}\n` : ""}registry entry (under "environments" in registry.json):\n${snippet}`,
  );
  return EXIT.ok;
}
