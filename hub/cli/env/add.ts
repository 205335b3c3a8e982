import { EXIT } from "../command.ts";
import { addEnvironment, type AddResult, installFromLock } from "../../store/install-environment.ts";
import { type EnvIo, parse, parsePairs, parseSpec, PROJECT_OPTION, REGISTRY_OPTION, UsageError } from "./io.ts";

export const ADD_HELP = `agentjet env add <name>[@version] [options]

Installs an environment into this project (.agentjet/envs/<name>/<version>/) and pins it in agentjet.lock:
resolve, fetch, verify sha256, install its npm dependencies, bundle (vm) or build its image (docker),
run its prepare hook, smoke-check it (reset + one step).

Options:
  --source <path|tarball|url>  install this folder or tarball instead of the registry's source
  --sha256 <hex>               the hash the content must have (default: the registry's, when listed):
                               the content sha256 that \`env pack\` prints (of the canonical uncompressed
                               tar, the same however it was compressed), or for a .tgz the file's sha256
                               (\`sha256sum\`); the output names which one matched
  --data <path>                dataset for the prepare hook (options.data)
  --option <k=v>               an option for the prepare hook (repeatable)
  --mount <name=path>          docker: a host folder for a named mount (repeatable)
  --image <tag>                docker: use this local image instead of building one
  --no-smoke                   skip the smoke check
  --offline                    prepare hooks may not download
  --force                      reinstall even when already installed
  --registry <path|url>        registry to resolve from (default: $AGENTJET_REGISTRY or the repo's)
  --project <dir>              project folder (default: the working directory)
  --json                       print the result as JSON

Exit codes: 0 installed, 1 failed, 2 usage, 3 not found, 4 sha256 mismatch (nothing installed).

Examples:
  agentjet env add aime --data ../shared/data/aime-2024.jsonl
  agentjet env add my-env --source ./my-env-0.1.0.tgz`;

const SHA256 = /^[0-9a-fA-F]{64}$/;

export const INSTALL_HELP = `agentjet env install [options]

Installs exactly what agentjet.lock pins (versions, hashes and install options).

Options: --no-smoke, --offline, --project <dir>, --json`;

export function describeAdd(r: AddResult): string {
  if (r.alreadyInstalled) return `${r.name}@${r.version} is already installed (${r.dir})`;
  const smoke = r.smoke ? (r.smoke.kind === "ok" ? "smoke check passed" : `smoke check ${r.smoke.kind}`) : "no smoke check";
  const check = r.verified === "unverified" ? "unverified" : `${r.verified}, ${r.matched === "tarball-file" ? "tarball file sha256 matched" : "content sha256 matched"}`;
  return `installed ${r.name}@${r.version} (${r.kind}, content sha256 ${r.sha256.slice(0, 16)}…, ${check}) in ${r.timings["total"]} s; ${smoke}\n  ${r.dir}`;
}

export async function runAdd(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...PROJECT_OPTION,
    ...REGISTRY_OPTION,
    source: { type: "string" },
    sha256: { type: "string" },
    data: { type: "string" },
    option: { type: "string", multiple: true },
    mount: { type: "string", multiple: true },
    image: { type: "string" },
    "no-smoke": { type: "boolean", default: false },
    offline: { type: "boolean", default: false },
    force: { type: "boolean", default: false },
  });
  const [spec, ...extra] = positionals;
  if (!spec || extra.length) throw new UsageError("usage: agentjet env add <name>[@version] [options]");
  const { name, version } = parseSpec(spec);
  if (values.sha256 !== undefined && !SHA256.test(values.sha256)) {
    throw new UsageError(`--sha256 takes 64 hex digits (the content sha256 that \`agentjet env pack\` prints), got '${values.sha256}'`);
  }
  const result = await addEnvironment({
    name,
    ...(version ? { version } : {}),
    ...(values.project ? { projectDir: values.project } : {}),
    ...(values.registry ? { registry: values.registry } : {}),
    ...(values.source ? { source: values.source } : {}),
    ...(values.sha256 ? { sha256: values.sha256 } : {}),
    ...(values.data ? { data: values.data } : {}),
    options: parsePairs(values.option, "--option"),
    mounts: parsePairs(values.mount, "--mount"),
    ...(values.image ? { image: values.image } : {}),
    smoke: !values["no-smoke"],
    online: !values.offline,
    force: values.force,
    onProgress: io.progress,
  });
  io.result({ environment: result }, describeAdd(result));
  return EXIT.ok;
}

export async function runInstall(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTION, "no-smoke": { type: "boolean", default: false }, offline: { type: "boolean", default: false } });
  if (positionals.length) throw new UsageError("usage: agentjet env install (installs agentjet.lock); use `env add <name>` for one environment");
  const results = await installFromLock({
    ...(values.project ? { projectDir: values.project } : {}),
    smoke: !values["no-smoke"],
    online: !values.offline,
    onProgress: io.progress,
  });
  io.result({ environments: results }, results.map(describeAdd).join("\n") || "agentjet.lock pins no environments");
  return EXIT.ok;
}
