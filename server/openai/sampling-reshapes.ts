import type { GenerationRequest } from "./generation-request.ts";
import { HttpError } from "./errors.ts";

/**
 * A policy refuses what would reshape the distribution it samples from: a frequency or presence penalty,
 * a logit bias. Its calls are trained on the log-probs of its own distribution (the ratios of GRPO's
 * loss), so tokens drawn from a penalized or biased one would be trained as if the policy had chosen
 * them. Each is a 400 naming the field, never a silent ignore; 0 and an empty bias, which some clients
 * always send, are accepted. (A frozen model is not trained: its penalties are forwarded.)
 */
export function refuseSamplingReshapes(req: GenerationRequest): void {
  const why = "a trained policy samples from its own distribution (its calls train on those log-probs)";
  const { frequency = 0, presence = 0 } = req.penalties ?? {};
  if (frequency !== 0) unsupported("frequency_penalty", `${why}; send 0 or leave it out`);
  if (presence !== 0) unsupported("presence_penalty", `${why}; send 0 or leave it out`);
  if (req.logitBias === true) unsupported("logit_bias", `${why}; leave it out`);
}

/** A `logit_bias` that biases something (`{}` and null bias nothing). */
export function hasBias(bias: Record<string, number> | null | undefined): boolean {
  return bias !== undefined && bias !== null && Object.keys(bias).length > 0;
}

function unsupported(param: string, message: string): never {
  throw new HttpError(400, "AJ_ERR_UNSUPPORTED_PARAMETER", `${param}: ${message}`, { param });
}
