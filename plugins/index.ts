export { openEnvironment, sourceImageTag } from "./open-environment.ts";
export { bundleVmPlugin } from "./isolated-vm/bundle-vm-plugin.ts";
export { buildDockerImage, BUNDLED_ENTRY } from "./docker/build-docker-image.ts";
export { ensureNodeBaseImage } from "./docker/node-base-image.ts";
export { containerRuntimeRegistered, dockerAvailable } from "./docker/docker-client.ts";
export {
  PluginError,
  BundleBuiltinError,
  BundleFailedError,
  ImageBuildError,
  UnknownSplitError,
  TaskFileError,
  ExternalSplitError,
  GenerateTasksError,
  RuntimeClosedError,
  ContainerRuntimeError,
} from "./errors.ts";
export { CONTAINER_RUNTIMES } from "./runtime.ts";
export type {
  ContainerRuntime,
  EnvironmentRuntime,
  EpisodeSession,
  Failure,
  FailureKind,
  OpenEnvironmentOptions,
  Outcome,
  RuntimeStats,
} from "./runtime.ts";
