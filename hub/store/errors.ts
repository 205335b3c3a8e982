import { AgentJetError } from "../../errors/index.ts";

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

export class InvalidPluginError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_STORE_INVALID_PLUGIN", message, { cause });
  }
}

export class SourceFetchError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_STORE_SOURCE_FETCH", message, { cause });
  }
}

/** A local `--source` (folder or tarball) that is not there: exit 3, like any other thing not found. */
export class SourceNotFoundError extends StoreError {
  constructor(message: string) {
    super("AJ_ERR_STORE_SOURCE_NOT_FOUND", message);
  }
}

export class DependencyInstallError extends StoreError {
  constructor(message: string) {
    super("AJ_ERR_STORE_DEPS_INSTALL", message);
  }
}

export class PrepareFailedError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_STORE_PREPARE", message, { cause });
  }
}

export class BuildFailedError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_STORE_BUILD", message, { cause });
  }
}

export class SmokeCheckFailedError extends StoreError {
  constructor(message: string) {
    super("AJ_ERR_STORE_SMOKE", message);
  }
}

export class InvalidLockfileError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_STORE_LOCK_INVALID", message, { cause });
  }
}

export class NotInstalledError extends StoreError {
  constructor(message: string) {
    super("AJ_ERR_STORE_NOT_INSTALLED", message);
  }
}
