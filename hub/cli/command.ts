/** A CLI subcommand. Each lives in `hub/cli/commands/<name>.ts` and exports `command`. */
export interface Command {
  name: string;
  /** One line for `agentjet --help`. */
  summary: string;
  /** The full `agentjet <name> --help` text: usage, every flag with its default, examples. */
  help: string;
  /** The help for these arguments, when it depends on them (e.g. `env add --help`); `help` otherwise. */
  helpFor?(argv: readonly string[]): string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(argv: string[]): Promise<number>;
}

/** Exit codes shared by every command. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  integrity: 4,
  interrupted: 130,
} as const;
