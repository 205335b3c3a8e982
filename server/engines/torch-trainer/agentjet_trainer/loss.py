"""The PPO-clip loss over masked (merged) samples: the same objective as the embedded engine.

For each trained token t of sample s: r = exp(logp_new(t) - logp_behaviour(t)),
l = -min(r * A_s, clip(r, 1 - eps, 1 + eps) * A_s), and the batch loss is
sum_s weight_s * sum_t l / (trained tokens in the whole batch) (token mean). Micro-batches therefore
divide by the batch's token count, not their own, so accumulation gives the same gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def token_logprobs(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """[B, L, V] logits and [B, L] ids -> [B, L] log-probs of ids[:, i] given ids[:, :i]; column 0 is 0."""
    shifted = logits[:, :-1, :]
    if shifted.dtype in (torch.float16, torch.bfloat16):
        shifted = shifted.float()
    targets = input_ids[:, 1:].unsqueeze(-1)
    picked = shifted.gather(-1, targets).squeeze(-1) - torch.logsumexp(shifted, dim=-1)
    return torch.nn.functional.pad(picked, (1, 0), value=0.0)


@dataclass
class LossParts:
    """Sums over the micro-batch; the caller divides by the batch's trained-token count."""

    loss_sum: torch.Tensor
    clipped: float
    tokens: float
    #: k3 KL to the reference, summed over trained tokens; None without a reference.
    kl_sum: float | None


def ppo_clip_loss(
    new_logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    weights: torch.Tensor,
    clip_eps: float,
    ref_logprobs: torch.Tensor | None = None,
    kl_coef: float = 0.0,
) -> LossParts:
    """[B, L] log-probs and mask, [B] advantages and weights. Returns sums (see LossParts)."""
    mask = mask.to(new_logprobs.dtype)
    log_ratio = (new_logprobs - old_logprobs) * mask
    ratio = torch.exp(log_ratio)
    adv = advantages.unsqueeze(1).to(new_logprobs.dtype)
    unclipped = ratio * adv
    clipped_obj = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * adv
    per_token = -torch.minimum(unclipped, clipped_obj)
    kl_sum = None
    if ref_logprobs is not None and kl_coef > 0:
        # k3 estimator of KL(new || reference): unbiased, always >= 0.
        d = (ref_logprobs - new_logprobs) * mask
        k3 = torch.exp(d) - d - 1.0
        per_token = per_token + kl_coef * k3
        kl_sum = float((k3 * mask).sum().detach())
    w = weights.unsqueeze(1).to(new_logprobs.dtype)
    loss_sum = (per_token * mask * w).sum()
    # As in the embedded engine: a token counts as clipped when the clipped term is the smaller one.
    clipped = float(((clipped_obj < unclipped).to(mask.dtype) * mask).sum())
    return LossParts(loss_sum=loss_sum, clipped=clipped, tokens=float(mask.sum()), kl_sum=kl_sum)
