import { EXIT } from "../command.ts";
import { pickLatest } from "../../registry/semver.ts";
import { listInstalled, resolveInstalled } from "../../store/resolve-installed.ts";
import { findVersion, loadRegistry } from "../../registry/load-registry.ts";
import { EnvironmentNotFoundError } from "../../registry/errors.ts";
import { type EnvIo, parse, PROJECT_OPTION, REGISTRY_OPTION, UsageError } from "./io.ts";

export const LIST_HELP = `agentjet env list [options]

Lists the environments installed in this project and those the registry makes available, with versions.

Options: --registry <path|url>, --project <dir>, --json`;

export const INFO_HELP = `agentjet env info <name> [options]

Shows an environment: its registry entry (description, tags, licence, versions, sources, hashes) and,
when installed, its installed version, folder, manifest, bundle or image.

Options: --registry <path|url>, --project <dir>, --json
Exit codes: 0, 3 when neither the registry nor the project has it.`;

export async function runList(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTION, ...REGISTRY_OPTION });
  if (positionals.length) throw new UsageError("usage: agentjet env list");
  const store = values.project ? { projectDir: values.project } : {};
  const installed = listInstalled(store).map((e) => ({ name: e.name, version: e.version, kind: e.kind, sha256: e.sha256, dir: e.dir }));
  const { registry, location } = await loadRegistry(values.registry);
  const available = Object.entries(registry.environments)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, env]) => {
      const versions = Object.keys(env.versions);
      const latest = pickLatest(versions) ?? "";
      return { name, description: env.description, tags: env.tags, license: env.license, versions, latest, kind: env.versions[latest]?.kind };
    });
  const rows = available.map((a) => {
    const inst = installed.find((i) => i.name === a.name);
    return `  ${a.name.padEnd(16)} ${a.latest.padEnd(9)} ${(a.kind ?? "").padEnd(7)} ${inst ? `installed ${inst.version}` : ""}`.trimEnd();
  });
  const extra = installed.filter((i) => !available.some((a) => a.name === i.name)).map((i) => `  ${i.name.padEnd(16)} ${i.version.padEnd(9)} ${i.kind.padEnd(7)} installed (not in the registry)`);
  const text = [`Installed: ${installed.length ? installed.map((i) => `${i.name}@${i.version}`).join(", ") : "none"}`, `Available (${location}):`, ...rows, ...extra].join("\n");
  io.result({ installed, available, registry: location }, text);
  return EXIT.ok;
}

export async function runInfo(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTION, ...REGISTRY_OPTION });
  const [name, ...extra] = positionals;
  if (!name || extra.length) throw new UsageError("usage: agentjet env info <name>");
  const { registry } = await loadRegistry(values.registry);
  const listed = registry.environments[name];
  const installed = resolveInstalled(name, undefined, values.project ? { projectDir: values.project } : {});
  if (!listed && !installed) throw new EnvironmentNotFoundError(`'${name}' is neither in the registry nor installed`);
  const latest = listed ? findVersion(registry, name).version : undefined;
  const description = listed?.description ?? installed?.manifest.description;
  const lines = [`${name}${description ? `: ${description}` : ""}`];
  if (!listed && installed) {
    // Outside the registry (installed with --source): the manifest and the lockfile say what it is.
    const m = installed.manifest;
    lines.push(`  not in the registry; licence ${m.license}; kind ${installed.kind}; content sha256 ${installed.sha256}`);
    lines.push(`  agents ${m.agents.map((a) => `${a.id} (${a.role})`).join(", ")}; splits ${Object.keys(m.splits).join(", ")}; reward [${m.reward.min}, ${m.reward.max}]`);
  }
  if (listed) {
    lines.push(`  licence ${listed.license}; tags ${listed.tags.join(", ") || "none"}; latest ${latest}`);
    for (const [v, e] of Object.entries(listed.versions)) lines.push(`  ${v} (${e.kind}) ${e.source.type} sha256 ${e.sha256}`);
  }
  if (installed) {
    lines.push(`  installed ${installed.version} at ${installed.dir}${installed.image ? ` (image ${installed.image})` : ""}${installed.bundlePath ? ` (bundle ${installed.bundlePath})` : ""}`);
  } else lines.push("  not installed");
  io.result(
    {
      name,
      registry: listed ?? null,
      latest: latest ?? null,
      installed: installed ? { version: installed.version, sha256: installed.sha256, kind: installed.kind, dir: installed.dir, bundlePath: installed.bundlePath ?? null, image: installed.image ?? null, options: installed.options, manifest: installed.manifest } : null,
    },
    lines.join("\n"),
  );
  return EXIT.ok;
}

