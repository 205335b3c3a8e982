import { AgentJetServerError } from "../errors.ts";

export class UnknownTokenizerError extends AgentJetServerError {
  constructor(kind: string) {
    super("AJ_ERR_TOKENIZER_UNKNOWN", `unknown tokenizer '${kind}' (known: embedded, qwen3)`);
  }
}
