import type { EnvironmentRuntime } from "../../plugins/index.ts";

/** An environment this client can run: an open runtime and the plugin's content hash. */
export interface ClientEnvironment {
  runtime: EnvironmentRuntime;
  hash: string;
  /** A development version (a local plugin folder being edited), announced as such (default false). */
  dev?: boolean;
  /** The plugin folder: where the manifest's `rewardModels` files (models, vocabularies, rubrics) are read. */
  dir?: string;
}
