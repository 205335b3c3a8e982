export { EnvironmentNotFoundError, InvalidRegistryError, InvalidTarballError, RegistryError, RegistryUnreadableError, UnpackablePathError } from "./errors.ts";
export { defaultRegistryLocation, findVersion, type LoadedRegistry, loadRegistry, parseRegistry, REPO_ROOT, resolveAgainst, type ResolvedVersion } from "./load-registry.ts";
export { extractTar, gzipTar, isPackExcluded, listPackEntries, type PackedTree, packTree, sha256Hex, ungzipIfNeeded } from "./pack-tree.ts";
export { buildRegistryJsonSchema, type Registry, type RegistryEnvironment, RegistryEnvironmentSchema, RegistrySchema, type RegistryVersion, RegistryVersionSchema, type Source, SourceSchema } from "./schema.ts";
export { compareVersions, pickLatest } from "./semver.ts";
export { readTar, type TarEntry, writeTar } from "./tar.ts";
