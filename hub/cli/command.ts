import { parseArgs, type ParseArgsConfig } from "node:util";
import { EXIT } from "../../errors/index.ts";

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

/**
 * Exit codes shared by every command, and the exit code of an error's `code`, from the one table
 * (errors/codes.json, docs/errors.md): every command maps a coded error to its exit code with `exitCodeFor`.
 */
export { EXIT, exitCodeFor } from "../../errors/index.ts";

/**
 * A flag's integer value, at least `min` (and at most `max`), or the usage message that says why not.
 * Digits only, with an optional '-': `Number()` would take '' (an unset shell variable) as 0, and ' 7',
 * '0x10' or '1e3'.
 */
export function parseIntFlag(flag: string, value: string, min: number, max?: number): { ok: true; value: number } | { ok: false; message: string } {
  const n = /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isSafeInteger(n) && n >= min && (max === undefined || n <= max)) return { ok: true, value: n };
  return { ok: false, message: `--${flag} must be an integer ${max === undefined ? `of at least ${min}` : `${min}-${max}`}, got '${value}'` };
}

/** A command's flags: node:util `parseArgs` options. */
type FlagOptions = NonNullable<ParseArgsConfig["options"]>;

/** The flags parsed strictly (no positionals); a usage error is printed with the command's help and gives null. */
function parseFlags<O extends FlagOptions>(name: string, help: string, argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true }).values;
  } catch (err) {
    console.error(`agentjet ${name}: ${(err as Error).message}\n\n${help}`);
    return null;
  }
}

/** The values of `flags` as `parseArgs` gives them. */
export type FlagValues<O extends FlagOptions> = NonNullable<ReturnType<typeof parseFlags<O>>>;

/**
 * A command that takes flags only (no positionals): `run` gets them parsed strictly; a usage error is
 * printed with the command's help and exits with `EXIT.usage` (`client`, `serve`, `mcp`).
 */
export function flagCommand<O extends FlagOptions>(flags: O, command: Omit<Command, "run"> & { run(values: FlagValues<O>): Promise<number> }): Command {
  return {
    ...command,
    async run(argv) {
      const values = parseFlags(command.name, command.help, argv, flags);
      return values === null ? EXIT.usage : command.run(values);
    },
  };
}
