import { AgentJetError, withCode } from "../../errors/index.ts";

/** Errors of the registry and the packer. Each carries a stable `code`; tests assert on it. */
export class RegistryError extends AgentJetError {}

export class InvalidRegistryError extends withCode(RegistryError, "AJ_ERR_REGISTRY_INVALID") {}

export class RegistryUnreadableError extends withCode(RegistryError, "AJ_ERR_REGISTRY_UNREADABLE") {}

export class EnvironmentNotFoundError extends withCode(RegistryError, "AJ_ERR_ENV_NOT_FOUND") {}

export class InvalidTarballError extends withCode(RegistryError, "AJ_ERR_TARBALL_INVALID") {}

export class UnpackablePathError extends withCode(RegistryError, "AJ_ERR_PACK_PATH") {}
