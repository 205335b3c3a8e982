/**
 * The per-token PPO-clip objective with an optional k3 KL penalty to a reference policy.
 * The caller scales each token's loss by the sample's weight over the batch's masked-token count.
 */
export interface TokenLoss {
  /** -min(ratio·A, clip(ratio)·A) + klCoef·k3. */
  loss: number;
  /** d loss / d (new log-prob). */
  dLogp: number;
  /** Whether the clipped term was the smaller one (its gradient is zero). */
  clipped: boolean;
  /** k3 estimate of KL(new || ref) at this token; 0 without a reference. */
  kl: number;
}

export interface TokenLossParams {
  clipEps: number;
  klCoef: number;
}

export function computeTokenLoss(
  newLogp: number,
  behaviourLogp: number,
  advantage: number,
  refLogp: number | undefined,
  params: TokenLossParams,
): TokenLoss {
  const ratio = Math.exp(newLogp - behaviourLogp);
  const clippedRatio = Math.min(Math.max(ratio, 1 - params.clipEps), 1 + params.clipEps);
  const unclippedObj = ratio * advantage;
  const clippedObj = clippedRatio * advantage;
  const clipped = clippedObj < unclippedObj;
  let loss = -(clipped ? clippedObj : unclippedObj);
  let dLogp = clipped ? 0 : -unclippedObj;
  let kl = 0;
  if (refLogp !== undefined && params.klCoef > 0) {
    // k3 = exp(ref - new) - (ref - new) - 1: unbiased, non-negative, low variance (Schulman).
    const logRatio = refLogp - newLogp;
    const e = Math.exp(logRatio);
    kl = e - logRatio - 1;
    loss += params.klCoef * kl;
    dLogp += params.klCoef * (1 - e);
  }
  return { loss, dLogp, clipped, kl };
}
