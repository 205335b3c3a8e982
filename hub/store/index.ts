export { BuildFailedError, DependencyInstallError, IntegrityError, InvalidLockfileError, InvalidPluginError, NotInstalledError, PrepareFailedError, SmokeCheckFailedError, SourceFetchError, SourceNotFoundError, StoreError } from "./errors.ts";
export { fetchSource, type FetchedSource } from "./fetch-source.ts";
export { type AddEnvironmentOptions, type AddResult, addEnvironment, installFromLock, type InstallFromLockOptions } from "./install-environment.ts";
export { type LockEntry, LockEntrySchema, type Lockfile, LockfileSchema, readLockfile, stableJson, writeLockfile } from "./lockfile.ts";
export { BUNDLE_FILE, envDir, envsRoot, imageTag, INSTALL_FILE, lockPath } from "./paths.ts";
export { MANIFEST_FILE, readManifest } from "./read-manifest.ts";
export { type InstalledEnvironment, listInstalled, type RemoveResult, removeEnvironment, resolveInstalled, type StoreOptions } from "./resolve-installed.ts";
export { runSmokeCheck, type SmokeResult } from "./smoke-check.ts";
