import { ERROR_CODES } from "./codes.ts";
import { EXIT } from "./exit-codes.ts";

export interface AgentJetErrorOptions {
  cause?: unknown;
  /** The HTTP status this error answers with; the code's registered status when not given. */
  httpStatus?: number;
}

/**
 * The root of every coded error. `code` is a stable `AJ_ERR_...` listed in `codes.ts` (a test checks);
 * tests and callers branch on it, never on the message.
 */
export class AgentJetError extends Error {
  readonly code: string;
  readonly httpStatus: number | undefined;
  constructor(code: string, message: string, options?: AgentJetErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.httpStatus = options?.httpStatus ?? ERROR_CODES.get(code)?.http;
  }

  /** The exit code a CLI command ends with for this error (`failure` unless the registry says otherwise). */
  get exitCode(): number {
    return exitCodeFor(this.code);
  }
}

/** The registered exit code of `code`; `failure` (1) for a code without one. Node's `ERR_PARSE_ARGS_*` are usage errors. */
export function exitCodeFor(code: string | undefined): number {
  if (code === undefined) return EXIT.failure;
  if (code.startsWith("ERR_PARSE_ARGS")) return EXIT.usage;
  return ERROR_CODES.get(code)?.exit ?? EXIT.failure;
}
