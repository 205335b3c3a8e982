export { AgentJetError, type AgentJetErrorOptions, exitCodeFor, withCode } from "./agentjet-error.ts";
export { ERROR_CODES, ERROR_GROUPS, type ErrorCodeInfo, type ErrorGroup } from "./codes.ts";
export { EXIT } from "./exit-codes.ts";
export { renderErrorDocs } from "./render-error-docs.ts";
