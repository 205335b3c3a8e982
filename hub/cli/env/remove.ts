import { EXIT } from "../command.ts";
import { NotInstalledError } from "../../store/errors.ts";
import { addEnvironment } from "../../store/install-environment.ts";
import { removeImage, sourceImageTag } from "../../store/remove-image.ts";
import { removeEnvironment, resolveInstalled } from "../../store/resolve-installed.ts";
import { describeAdd } from "./add.ts";
import { type EnvIo, parse, PROJECT_OPTION, REGISTRY_OPTION, UsageError } from "./io.ts";

export const REMOVE_HELP = `agentjet env remove <name> [options]

Removes an installed environment (its folder under .agentjet/envs/, its agentjet.lock entry, the
docker image the store built for it, and an image \`env test\` left of that version's source).

Options: --keep-image, --project <dir>, --json
Exit codes: 0 removed, 3 not installed.`;

export const UPDATE_HELP = `agentjet env update <name> [options]

Installs the registry's newest version of an installed environment (with the same install options), then
removes the old version. Does nothing when the newest version and hash are already installed.

Options: --no-smoke, --registry <path|url>, --project <dir>, --json
Exit codes: 0, 1 failed (the old version stays), 3 not installed or not in the registry, 4 sha256 mismatch.`;

export async function runRemove(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTION, "keep-image": { type: "boolean", default: false } });
  const [name, ...extra] = positionals;
  if (!name || extra.length) throw new UsageError("usage: agentjet env remove <name>");
  const result = removeEnvironment(name, values.project ? { projectDir: values.project } : {});
  if (!result.removed) throw new NotInstalledError(`'${name}' is not installed in this project`);
  const imageRemoved = result.image && !values["keep-image"] ? await removeImage(result.image) : false;
  if (result.image && result.version && !values["keep-image"]) await removeImage(sourceImageTag(name, result.version));
  io.result({ removed: result }, `removed ${name}${result.version ? `@${result.version}` : ""}${imageRemoved ? ` and image ${result.image}` : ""}`);
  return EXIT.ok;
}

export async function runUpdate(argv: string[], io: EnvIo): Promise<number> {
  const { values, positionals } = parse(argv, { ...PROJECT_OPTION, ...REGISTRY_OPTION, "no-smoke": { type: "boolean", default: false } });
  const [name, ...extra] = positionals;
  if (!name || extra.length) throw new UsageError("usage: agentjet env update <name>");
  const store = values.project ? { projectDir: values.project } : {};
  const installed = resolveInstalled(name, undefined, store);
  if (!installed) throw new NotInstalledError(`'${name}' is not installed; use \`agentjet env add ${name}\``);
  const { data, ...options } = installed.options;
  const result = await addEnvironment({
    name,
    ...store,
    ...(values.registry ? { registry: values.registry } : {}),
    ...(data ? { data } : {}),
    options,
    ...(installed.mounts ? { mounts: installed.mounts } : {}),
    smoke: !values["no-smoke"],
    onProgress: io.progress,
  });
  const from = installed.version === result.version && installed.sha256 === result.sha256 ? undefined : installed.version;
  io.result({ environment: result, previousVersion: installed.version }, from === undefined ? `${name}@${result.version} is up to date` : `updated ${name} ${from} -> ${result.version}\n${describeAdd(result)}`);
  return EXIT.ok;
}
