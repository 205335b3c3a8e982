import { AgentJetError, withCode } from "../errors/index.ts";

/** Errors of the sandbox drivers. Expected failures of an episode are `Outcome` values; these are for misuse and setup. */
export class PluginError extends AgentJetError {}

export class BundleBuiltinError extends withCode(PluginError, "AJ_ERR_PLUGIN_BUNDLE_BUILTIN") {}

/** A package the code imports is not in the plugin's node_modules (npm install was not run, or it is not declared). */
export class BundleMissingDependencyError extends withCode(PluginError, "AJ_ERR_PLUGIN_BUNDLE_MISSING_DEP") {}

export class BundleFailedError extends withCode(PluginError, "AJ_ERR_PLUGIN_BUNDLE_FAILED") {}

export class ImageBuildError extends withCode(PluginError, "AJ_ERR_PLUGIN_IMAGE_BUILD") {}

export class UnknownSplitError extends PluginError {
  constructor(split: string, known: string[]) {
    super("AJ_ERR_PLUGIN_UNKNOWN_SPLIT", `no split "${split}" in the manifest (known: ${known.join(", ")})`);
  }
}

export class TaskFileError extends withCode(PluginError, "AJ_ERR_PLUGIN_TASK_FILE") {}

export class ExternalSplitError extends PluginError {
  constructor(split: string) {
    super(
      "AJ_ERR_PLUGIN_EXTERNAL_SPLIT",
      `split "${split}" reads user-supplied data: open the environment with a dataDir (its installed store)`,
    );
  }
}

export class GenerateTasksError extends withCode(PluginError, "AJ_ERR_PLUGIN_GENERATE_TASKS") {}

export class RuntimeClosedError extends PluginError {
  constructor() {
    super("AJ_ERR_PLUGIN_RUNTIME_CLOSED", "the environment runtime is closed");
  }
}

export class ContainerRuntimeError extends withCode(PluginError, "AJ_ERR_PLUGIN_CONTAINER_RUNTIME") {}
