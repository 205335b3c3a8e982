import { AgentJetError, withCode } from "../../errors/index.ts";

/** Errors of the env store. Each carries a stable `code`; the CLI maps codes to exit codes. */
export class StoreError extends AgentJetError {}

/** The content's sha256 differs from the pinned one: nothing was installed. */
export class IntegrityError extends StoreError {
  readonly expected: string;
  readonly actual: string;
  constructor(message: string, expected: string, actual: string) {
    super("AJ_ERR_STORE_INTEGRITY", message);
    this.expected = expected;
    this.actual = actual;
  }
}

export class InvalidPluginError extends withCode(StoreError, "AJ_ERR_STORE_INVALID_PLUGIN") {}

export class SourceFetchError extends withCode(StoreError, "AJ_ERR_STORE_SOURCE_FETCH") {}

/** A local `--source` (folder or tarball) that is not there: exit 3, like any other thing not found. */
export class SourceNotFoundError extends withCode(StoreError, "AJ_ERR_STORE_SOURCE_NOT_FOUND") {}

export class DependencyInstallError extends withCode(StoreError, "AJ_ERR_STORE_DEPS_INSTALL") {}

export class PrepareFailedError extends withCode(StoreError, "AJ_ERR_STORE_PREPARE") {}

export class BuildFailedError extends withCode(StoreError, "AJ_ERR_STORE_BUILD") {}

export class SmokeCheckFailedError extends withCode(StoreError, "AJ_ERR_STORE_SMOKE") {}

export class InvalidLockfileError extends withCode(StoreError, "AJ_ERR_STORE_LOCK_INVALID") {}

export class NotInstalledError extends withCode(StoreError, "AJ_ERR_STORE_NOT_INSTALLED") {}
