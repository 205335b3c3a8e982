"""Builds a causal LM from a name/path, or randomly initialised from its config (no weight download)."""

from __future__ import annotations

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, PretrainedConfig


def dtype_kwargs(dtype: torch.dtype) -> dict:
    """transformers renamed `torch_dtype` to `dtype` in 4.56."""
    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def build_model(model: str | PretrainedConfig, dtype: torch.dtype, random_init: bool = False, seed: int = 0) -> torch.nn.Module:
    if isinstance(model, PretrainedConfig) or random_init:
        config = model if isinstance(model, PretrainedConfig) else AutoConfig.from_pretrained(model)
        torch.manual_seed(seed)
        return AutoModelForCausalLM.from_config(config, **dtype_kwargs(dtype))
    return AutoModelForCausalLM.from_pretrained(model, **dtype_kwargs(dtype))
