"""A tiny causal transformer in plain torch (no transformers): CPU tests, smoke benchmarks, the CI trainer.

It has the surface the backend uses from a Hugging Face causal LM: `model(input_ids, attention_mask,
position_ids, use_cache) -> .logits`, `save_pretrained(path, state_dict=None)` and
`TinyCausalLM.from_pretrained(path)`. `attention_mask` is either [B, L] (1 = real token; causal
attention is added) or an explicit [B, L, L] / [B, 1, L, L] mask of the pairs that may attend (query
row, key column), which is what a tree-attention packer hands over together with `position_ids`.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass

import torch
from torch import nn

MODEL_TYPE = "agentjet-tiny"
#: The `--model` value that builds this model instead of a Hugging Face one.
TINY_MODEL_NAME = "agentjet-tiny"
WEIGHTS_FILE = "model.pt"
CONFIG_FILE = "config.json"


@dataclass
class TinyConfig:
    vocab_size: int = 512
    hidden_size: int = 32
    num_layers: int = 2
    num_heads: int = 4
    max_positions: int = 4096


@dataclass
class CausalLMOutput:
    logits: torch.Tensor


class _Block(nn.Module):
    def __init__(self, c: TinyConfig):
        super().__init__()
        self.heads = c.num_heads
        self.norm1 = nn.LayerNorm(c.hidden_size)
        self.qkv = nn.Linear(c.hidden_size, 3 * c.hidden_size)
        self.proj = nn.Linear(c.hidden_size, c.hidden_size)
        self.norm2 = nn.LayerNorm(c.hidden_size)
        self.mlp = nn.Sequential(nn.Linear(c.hidden_size, 4 * c.hidden_size), nn.GELU(), nn.Linear(4 * c.hidden_size, c.hidden_size))

    def forward(self, x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
        attn = torch.softmax(scores, dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


def _allowed_pairs(attention_mask: torch.Tensor | None, b: int, n: int, device: torch.device) -> torch.Tensor:
    """[B, 1, L, L] booleans: may query i attend to key j."""
    if attention_mask is not None and attention_mask.dim() in (3, 4):
        m = attention_mask.bool()
        return m if m.dim() == 4 else m.unsqueeze(1)
    causal = torch.ones(n, n, dtype=torch.bool, device=device).tril()
    allowed = causal.expand(b, 1, n, n)
    if attention_mask is not None:
        keys = attention_mask.bool()[:, None, None, :]
        # A padded query row keeps its own diagonal, so softmax never sees an all-masked row.
        allowed = (allowed & keys) | torch.eye(n, dtype=torch.bool, device=device)
    return allowed


class TinyCausalLM(nn.Module):
    #: The blocks FSDP wraps one by one (a Hugging Face model's attribute of the same name).
    _no_split_modules = ["_Block"]

    def __init__(self, config: TinyConfig):
        super().__init__()
        if config.hidden_size % config.num_heads:
            raise ValueError("hidden_size must be a multiple of num_heads")
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.positions = nn.Embedding(config.max_positions, config.hidden_size)
        self.blocks = nn.ModuleList(_Block(config) for _ in range(config.num_layers))
        self.norm = nn.LayerNorm(config.hidden_size)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        use_cache: bool = False,
    ) -> CausalLMOutput:
        del use_cache  # no KV cache: the trainer scores whole sequences
        b, n = input_ids.shape
        if n > self.config.max_positions:
            raise ValueError(f"sequence of {n} tokens is longer than max_positions {self.config.max_positions}")
        if position_ids is None:
            position_ids = torch.arange(n, device=input_ids.device).expand(b, n)
        x = self.embed(input_ids) + self.positions(position_ids)
        allowed = _allowed_pairs(attention_mask, b, n, input_ids.device)
        for block in self.blocks:
            x = block(x, allowed)
        # Tied input and output embeddings, as in small Qwen models.
        return CausalLMOutput(logits=self.norm(x) @ self.embed.weight.t())

    def save_pretrained(self, path: str, state_dict: dict | None = None) -> None:
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, CONFIG_FILE), "w") as f:
            json.dump({"model_type": MODEL_TYPE, **asdict(self.config)}, f)
        torch.save(state_dict if state_dict is not None else self.state_dict(), os.path.join(path, WEIGHTS_FILE))

    @classmethod
    def from_pretrained(cls, path: str) -> "TinyCausalLM":
        with open(os.path.join(path, CONFIG_FILE)) as f:
            raw = json.load(f)
        if raw.pop("model_type", None) != MODEL_TYPE:
            raise ValueError(f"{path} does not hold an {MODEL_TYPE} model")
        model = cls(TinyConfig(**raw))
        state = torch.load(os.path.join(path, WEIGHTS_FILE), map_location="cpu")
        model.load_state_dict({k: v.float() for k, v in state.items()})
        return model


def is_tiny_checkpoint(path: str) -> bool:
    try:
        with open(os.path.join(path, CONFIG_FILE)) as f:
            return json.load(f).get("model_type") == MODEL_TYPE
    except (OSError, ValueError):
        return False


def build_tiny(config: TinyConfig, seed: int = 0) -> TinyCausalLM:
    torch.manual_seed(seed)
    return TinyCausalLM(config)
