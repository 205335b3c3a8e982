import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defineEnvironment, type EnvironmentDefinition } from "../../../sdk/env/define-environment.ts";
import type { AppWorldClient } from "./appworld-client.ts";
import { createAppWorldEpisode } from "./episode.ts";

/**
 * The AppWorld environment, inside its container: episodes drive `client`; `solve` (the conformance
 * suite's reference agent) answers with the task's ground-truth solution from the mounted data
 * (`tasks/<id>/ground_truth/solution.py`), when the data has one.
 */
export function createAppWorldEnvironment(opts: { client: AppWorldClient; dataDir: string }): EnvironmentDefinition {
  return defineEnvironment({
    createEpisode: () => createAppWorldEpisode(opts.client),
    solve({ task }) {
      if (!/^[A-Za-z0-9_]+$/.test(task.id)) throw new Error(`invalid AppWorld task id ${task.id}`);
      const file = join(opts.dataDir, "tasks", task.id, "ground_truth", "solution.py");
      if (!existsSync(file)) throw new Error(`no reference solution for ${task.id}: ${file} does not exist`);
      return `\`\`\`python\n${readFileSync(file, "utf8").trim()}\n\`\`\``;
    },
  });
}
