/**
 * Install-time data preparation. A plugin whose manifest names `prepare` exports
 * `prepare(ctx: PrepareContext): Promise<void>`. It runs on the host (not in the sandbox), once, at
 * `agentjet env add`, and writes the files that the manifest's `{ file }` splits name, under `ctx.outDir`.
 */
export interface PrepareContext {
  /** The plugin's source folder. */
  pluginDir: string;
  /** Where dataset files go; `{ file: "data/train.jsonl" }` splits resolve against it. */
  outDir: string;
  /** Options from the command line (`--data path`, `--option k=v`) or the run config's `options`. */
  options: Record<string, unknown>;
  /** Whether downloads are allowed (false offline, or with --offline). */
  online: boolean;
  log(line: string): void;
}

export type PrepareFunction = (ctx: PrepareContext) => Promise<void>;
