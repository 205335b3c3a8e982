import { AgentJetError } from "../errors/index.ts";

/** Errors of the sandbox drivers. Expected failures of an episode are `Outcome` values; these are for misuse and setup. */
export class PluginError extends AgentJetError {}

export class BundleBuiltinError extends PluginError {
  constructor(message: string) {
    super("AJ_ERR_PLUGIN_BUNDLE_BUILTIN", message);
  }
}

/** A package the code imports is not in the plugin's node_modules (npm install was not run, or it is not declared). */
export class BundleMissingDependencyError extends PluginError {
  constructor(message: string) {
    super("AJ_ERR_PLUGIN_BUNDLE_MISSING_DEP", message);
  }
}

export class BundleFailedError extends PluginError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_PLUGIN_BUNDLE_FAILED", message, { cause });
  }
}

export class ImageBuildError extends PluginError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_PLUGIN_IMAGE_BUILD", message, { cause });
  }
}

export class UnknownSplitError extends PluginError {
  constructor(split: string, known: string[]) {
    super("AJ_ERR_PLUGIN_UNKNOWN_SPLIT", `no split "${split}" in the manifest (known: ${known.join(", ")})`);
  }
}

export class TaskFileError extends PluginError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_PLUGIN_TASK_FILE", message, { cause });
  }
}

export class ExternalSplitError extends PluginError {
  constructor(split: string) {
    super(
      "AJ_ERR_PLUGIN_EXTERNAL_SPLIT",
      `split "${split}" reads user-supplied data: open the environment with a dataDir (its installed store)`,
    );
  }
}

export class GenerateTasksError extends PluginError {
  constructor(message: string) {
    super("AJ_ERR_PLUGIN_GENERATE_TASKS", message);
  }
}

export class RuntimeClosedError extends PluginError {
  constructor() {
    super("AJ_ERR_PLUGIN_RUNTIME_CLOSED", "the environment runtime is closed");
  }
}

export class ContainerRuntimeError extends PluginError {
  constructor(message: string) {
    super("AJ_ERR_PLUGIN_CONTAINER_RUNTIME", message);
  }
}
