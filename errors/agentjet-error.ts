import { ERROR_CODES } from "./codes.ts";
import { EXIT } from "./exit-codes.ts";

export interface AgentJetErrorOptions {
  cause?: unknown;
  /** The HTTP status this error answers with; the code's registered status when not given. */
  httpStatus?: number;
}

/**
 * The root of every coded error. `code` is a stable `AJ_ERR_...` listed in `codes.json` (a test checks);
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

/**
 * The base of an error class with one code, whose message (and cause, if any) is given where it is thrown:
 * `export class SourceFetchError extends withCode(StoreError, "AJ_ERR_STORE_SOURCE_FETCH") {}`. The class
 * keeps its own name (`err.name`), its folder's base (`instanceof StoreError`) and its code, written beside it.
 */
export function withCode<B extends typeof AgentJetError>(Base: B, code: string) {
  const Parent: typeof AgentJetError = Base;
  return class extends Parent {
    constructor(message: string, cause?: unknown) {
      super(code, message, { cause });
    }
  } as unknown as new (message: string, cause?: unknown) => InstanceType<B>;
}

/** The registered exit code of `code`; `failure` (1) for a code without one. Node's `ERR_PARSE_ARGS_*` are usage errors. */
export function exitCodeFor(code: string | undefined): number {
  if (code === undefined) return EXIT.failure;
  if (code.startsWith("ERR_PARSE_ARGS")) return EXIT.usage;
  return ERROR_CODES.get(code)?.exit ?? EXIT.failure;
}
