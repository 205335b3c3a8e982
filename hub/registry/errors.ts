import { AgentJetError } from "../../errors/index.ts";

/** Errors of the registry and the packer. Each carries a stable `code`; tests assert on it. */
export class RegistryError extends AgentJetError {}

export class InvalidRegistryError extends RegistryError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_REGISTRY_INVALID", message, { cause });
  }
}

export class RegistryUnreadableError extends RegistryError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_REGISTRY_UNREADABLE", message, { cause });
  }
}

export class EnvironmentNotFoundError extends RegistryError {
  constructor(message: string) {
    super("AJ_ERR_ENV_NOT_FOUND", message);
  }
}

export class InvalidTarballError extends RegistryError {
  constructor(message: string) {
    super("AJ_ERR_TARBALL_INVALID", message);
  }
}

export class UnpackablePathError extends RegistryError {
  constructor(message: string) {
    super("AJ_ERR_PACK_PATH", message);
  }
}
