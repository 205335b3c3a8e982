"""Prefix-tree training: a batch's samples packed into one token trie, scored in one forward pass.

The TS side (server/training/prefix-tree.ts) sends the trie as the optional `tree` field of a train-step
request: `{"token_ids": [...], "parents": [...], "leaves": [...]}`, one entry per trie node (a node's
parent precedes it; -1 for a root) and, per sample, the node of its last token. Sample k is the path
from its root to `leaves[k]`. The per-token loss mask, behaviour log-probs, advantage and weight stay on
the flat samples, so the loss is `loss.ppo_clip_loss` over exactly the flat batch's tokens.

The forward runs once over the trie's nodes with a block mask: node i may attend to node j only when j is
on i's root-to-i path, and its position id is its depth. Each node's activations are then those it has in
every flat sample through it, while a shared prefix (a retried call, n > 1 branches of one prompt) is
computed once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .protocol import Sample, invalid


@dataclass
class TreeLayout:
    token_ids: list[int]
    parents: list[int]
    #: Per sample, the trie node of its last token.
    leaves: list[int]


def parse_tree(raw: object, samples: list[Sample], param: str = "tree") -> TreeLayout:
    """Validates a request's `tree` against its samples: every sample must be its leaf's path."""
    if not isinstance(raw, dict):
        raise invalid("tree must be an object", param)
    ids, parents, leaves = raw.get("token_ids"), raw.get("parents"), raw.get("leaves")
    for name, v in (("token_ids", ids), ("parents", parents), ("leaves", leaves)):
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise invalid(f"{name} must be an array of integers", f"{param}.{name}")
    assert isinstance(ids, list) and isinstance(parents, list) and isinstance(leaves, list)
    if len(parents) != len(ids):
        raise invalid(f"length {len(parents)} != token_ids length {len(ids)}", f"{param}.parents")
    for i, p in enumerate(parents):
        if not -1 <= p < i:
            raise invalid("a node's parent must precede it (or be -1)", f"{param}.parents.{i}")
    if len(leaves) != len(samples):
        raise invalid(f"length {len(leaves)} != samples length {len(samples)}", f"{param}.leaves")
    layout = TreeLayout(list(ids), list(parents), list(leaves))
    for k, s in enumerate(samples):
        if not 0 <= leaves[k] < len(ids) or [ids[n] for n in tree_path(layout, k)] != s.token_ids:
            raise invalid(f"the path to leaf {leaves[k]} is not sample {k}'s token_ids", f"{param}.leaves.{k}")
    return layout


def tree_path(layout: TreeLayout, sample: int) -> list[int]:
    """The nodes of one sample, root to leaf: entry t is the node of its token t."""
    out: list[int] = []
    n = layout.leaves[sample]
    while n >= 0:
        out.append(n)
        n = layout.parents[n]
    out.reverse()
    return out


def tree_inputs(layout: TreeLayout, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`input_ids` [1, N], `position_ids` [1, N] (depths) and the block mask [1, N, N] (query row, key column)."""
    n = len(layout.token_ids)
    allowed = torch.zeros(n, n, dtype=torch.bool)
    depth = [0] * n
    for i, p in enumerate(layout.parents):
        if p >= 0:
            allowed[i] = allowed[p]
            depth[i] = depth[p] + 1
        allowed[i, i] = True
    ids = torch.tensor([layout.token_ids], dtype=torch.long, device=device)
    positions = torch.tensor([depth], dtype=torch.long, device=device)
    return ids, positions, allowed.unsqueeze(0).to(device)


def build_layout(samples: list[Sample]) -> TreeLayout:
    """The trie of the samples' token ids, in sample order (server/training/prefix-tree.ts builds the same one)."""
    ids: list[int] = []
    parents: list[int] = []
    children: dict[tuple[int, int], int] = {}
    leaves: list[int] = []
    for s in samples:
        parent = -1
        for tok in s.token_ids:
            node = children.get((parent, tok))
            if node is None:
                node = len(ids)
                ids.append(tok)
                parents.append(parent)
                children[(parent, tok)] = node
            parent = node
        leaves.append(parent)
    return TreeLayout(ids, parents, leaves)


def pack_tries(samples: list[Sample], max_nodes: int) -> list[tuple[list[Sample], TreeLayout]]:
    """The batch as tries of at most `max_nodes` nodes (a longer sample gets one of its own), after ordering
    the samples by their tokens so that samples sharing a prefix are neighbours (as `packPrefixTrees`)."""
    groups: list[list[Sample]] = []
    nodes = 0
    prev: list[int] = []
    for s in sorted(samples, key=lambda s: s.token_ids):
        shared = 0
        for a, b in zip(prev, s.token_ids):
            if a != b:
                break
            shared += 1
        added = len(s.token_ids) - shared
        if groups and nodes + added <= max_nodes:
            groups[-1].append(s)
            nodes += added
        else:
            groups.append([s])
            nodes = len(s.token_ids)
        prev = s.token_ids
    return [(g, build_layout(g)) for g in groups]


def additive_mask(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """[B, L, L] booleans -> [B, 1, L, L] of 0 (may attend) and dtype's minimum: the custom 4D mask a
    Hugging Face model takes (the form every transformers version since 4.38 reads the same way)."""
    zero = torch.zeros((), dtype=dtype, device=allowed.device)
    return torch.where(allowed, zero, torch.finfo(dtype).min).unsqueeze(1)


def path_logprobs(logits: torch.Tensor, layout: TreeLayout) -> torch.Tensor:
    """[N, V] node logits -> [B, L] log-prob of each sample's token t given its path (column 0 and padding are 0)."""
    # At least float32 (as `loss.token_logprobs`); float64 stays float64.
    logits = logits if logits.dtype == torch.float64 else logits.float()
    device = logits.device
    parents = torch.tensor(layout.parents, dtype=torch.long, device=device)
    tokens = torch.tensor(layout.token_ids, dtype=torch.long, device=device)
    has_parent = parents >= 0
    # Node i's token is scored by its parent's row (the token before it on every path through it).
    rows = parents.clamp(min=0)
    node_lp = logits[rows, tokens] - torch.logsumexp(logits, dim=-1)[rows]
    node_lp = torch.where(has_parent, node_lp, torch.zeros_like(node_lp))
    paths = [tree_path(layout, k) for k in range(len(layout.leaves))]
    width = max(len(p) for p in paths)
    index = torch.tensor([p + [p[0]] * (width - len(p)) for p in paths], dtype=torch.long, device=device)
    valid = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in paths], dtype=torch.bool, device=device)
    gathered = node_lp[index]
    return torch.where(valid, gathered, torch.zeros_like(gathered))


def tree_logprobs(
    model: torch.nn.Module, layout: TreeLayout, device: torch.device | str = "cpu", mask_dtype: torch.dtype | None = None
) -> torch.Tensor:
    """[B, L] log-prob of each sample's token t given its path (column 0 and padding are 0), from one forward.

    The model gets the pair mask as [1, L, L] booleans (`tiny_model.TinyCausalLM`), or with `mask_dtype`
    as a Hugging Face model's additive [1, 1, L, L] mask of that dtype (the attention's compute dtype).
    """
    ids, positions, allowed = tree_inputs(layout, device)
    mask = allowed if mask_dtype is None else additive_mask(allowed, mask_dtype)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits[0]
    return path_logprobs(logits, layout)
