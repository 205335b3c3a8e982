import { withCode } from "../../../errors/index.ts";
import { AgentJetServerError } from "../../errors.ts";

/** Errors of the embedded engine. Each carries a stable `code`; tests assert on it. */
export class EmbeddedEngineError extends AgentJetServerError {}

/** The model options do not describe a buildable model (e.g. `dim` not divisible by `heads`). */
export class EmbeddedConfigError extends withCode(EmbeddedEngineError, "AJ_ERR_EMBEDDED_CONFIG") {}

/** A prompt or training sample is longer than the model's context. */
export class EmbeddedContextOverflowError extends EmbeddedEngineError {
  readonly length: number;
  readonly maxContext: number;
  constructor(length: number, maxContext: number, what: string) {
    super("AJ_ERR_EMBEDDED_CONTEXT_OVERFLOW", `${what} has ${length} tokens; the context holds ${maxContext}`);
    this.length = length;
    this.maxContext = maxContext;
  }
}

/** Token ids outside the vocabulary, an empty prompt, or a sample whose arrays disagree in length. */
export class EmbeddedInputError extends withCode(EmbeddedEngineError, "AJ_ERR_EMBEDDED_INPUT") {}

/** A checkpoint is missing, unreadable, or its files disagree with its header. */
export class EmbeddedCheckpointInvalidError extends withCode(EmbeddedEngineError, "AJ_ERR_EMBEDDED_CHECKPOINT_INVALID") {}

/** The embedded tokenizer's vocabulary before its byte fallback (checkpoints of that time). */
const LEGACY_EMBEDDED_VOCAB = 101;

/** A checkpoint was written by a model of another shape than the engine loading it. */
export class EmbeddedCheckpointMismatchError extends EmbeddedEngineError {
  readonly field: string;
  constructor(field: string, expected: unknown, found: unknown) {
    super(
      "AJ_ERR_EMBEDDED_CHECKPOINT_MISMATCH",
      `checkpoint ${field} is ${JSON.stringify(found)}, this engine's is ${JSON.stringify(expected)}` +
        (field === "shape.vocabSize" && found === LEGACY_EMBEDDED_VOCAB
          ? ": it was written before the embedded tokenizer fell back to bytes (101 ids, non-ASCII as '?'); " +
            "its weights cannot be loaded, train it again from this version"
          : ""),
    );
    this.field = field;
  }
}

/** The engine was closed. */
export class EmbeddedClosedError extends EmbeddedEngineError {
  constructor() {
    super("AJ_ERR_EMBEDDED_CLOSED", "the embedded engine is closed");
  }
}
