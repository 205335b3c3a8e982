import { AgentJetError } from "../errors/index.ts";

/** The base of every coded server error. `code` is stable (`AJ_ERR_...`, registered in errors/codes.json); tests assert on it. */
export class AgentJetServerError extends AgentJetError {}
