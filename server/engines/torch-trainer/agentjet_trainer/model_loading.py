"""Builds the policy model: the plain-torch tiny model, or a Hugging Face causal LM (name/path or config)."""

from __future__ import annotations

from typing import Any

import torch

from .tiny_model import TINY_MODEL_NAME, TinyConfig, TinyCausalLM, build_tiny, is_tiny_checkpoint


def dtype_kwargs(dtype: torch.dtype) -> dict:
    """transformers renamed `torch_dtype` to `dtype` in 4.56."""
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def build_model(model: Any, dtype: torch.dtype, random_init: bool = False, seed: int = 0, tiny: TinyConfig | None = None) -> torch.nn.Module:
    """`model`: "agentjet-tiny" (built from `tiny`, seeded), a saved tiny model's folder, a transformers
    `PretrainedConfig` (random weights), or a Hugging Face name/path (`random_init`: from its config)."""
    if model == TINY_MODEL_NAME:
        return build_tiny(tiny or TinyConfig(), seed).to(dtype)
    if isinstance(model, str) and is_tiny_checkpoint(model):
        return TinyCausalLM.from_pretrained(model).to(dtype)
    from transformers import AutoConfig, AutoModelForCausalLM, PretrainedConfig

    if isinstance(model, PretrainedConfig) or random_init:
        config = model if isinstance(model, PretrainedConfig) else AutoConfig.from_pretrained(model)
        torch.manual_seed(seed)
        return AutoModelForCausalLM.from_config(config, **dtype_kwargs(dtype))
    return AutoModelForCausalLM.from_pretrained(model, **dtype_kwargs(dtype))
