"""The torch backend: LoRA (peft) or full fine-tuning with the PPO-clip loss, Adam and grad clipping."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import torch

from .data_parallel import DataParallel
from .inference_client import load_lora_adapter, reload_weights
from .loss import ppo_clip_loss, token_logprobs
from .protocol import ProtocolError, Publish, Sample, TrainStep
from .tiny_model import TinyCausalLM
from .tree_attention import TreeLayout, additive_mask, pack_tries, path_logprobs, tree_inputs

STATE_FILE = "trainer-state.json"


@dataclass
class TrainerSettings:
    mode: str = "lora"
    lr: float = 1e-5
    beta1: float = 0.9
    beta2: float = 0.999
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    clip_eps: float = 0.2
    kl_coef: float = 0.0
    #: Optimizer steps over each batch.
    epochs: int = 1
    #: Padded tokens per forward/backward; samples longer than this get a micro-batch of their own.
    micro_batch_tokens: int = 16384
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_target_modules: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )
    publish_dir: str = "./publish"
    #: Full weights: after each publish, the published `v<k>` folders older than the newest this many are
    #: removed (each is a whole model: a 7B in bf16 is 15 GB a step); 0 keeps every one.
    keep_published: int = 0
    #: dtype of published full weights (bf16 for inference engines; the tiny CPU model keeps fp32).
    publish_dtype: torch.dtype = torch.bfloat16
    gradient_checkpointing: bool = False
    #: Micro-batches are prefix tries of at most `micro_batch_tokens` nodes, each scored in one forward
    #: with a tree attention mask (tree_attention.py): a shared prefix is computed once, the step is the same.
    prefix_tree: bool = False


def micro_batches(samples: list[Sample], budget: int) -> list[list[Sample]]:
    """Longest first; each micro-batch's padded size (count x longest) stays within the budget."""
    out: list[list[Sample]] = []
    for s in sorted(samples, key=lambda s: len(s.token_ids), reverse=True):
        if out and len(out[-1][0].token_ids) * (len(out[-1]) + 1) <= budget:
            out[-1].append(s)
        else:
            out.append([s])
    return out


CURRENT_LINK = "current"


def point_current_at(publish_dir: str, path: str) -> None:
    """Atomically repoints `<publish_dir>/current` at `path`: replicas started from that folder reload it."""
    link = os.path.join(publish_dir, CURRENT_LINK)
    tmp = f"{link}.tmp-{os.getpid()}"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.basename(path), tmp)
    os.replace(tmp, link)


def prune_published(publish_dir: str, keep: int, newest: int) -> list[str]:
    """Removes the `v<k>` folders with k <= newest - keep, never the one `current` points at; returns their names."""
    current = os.path.realpath(os.path.join(publish_dir, CURRENT_LINK))
    removed = []
    for name in sorted(os.listdir(publish_dir)):
        m = re.fullmatch(r"v(\d+)", name)
        path = os.path.join(publish_dir, name)
        if m and int(m.group(1)) <= newest - keep and os.path.realpath(path) != current:
            shutil.rmtree(path)
            removed.append(name)
    return removed


def _safe_name(s: str) -> str:
    return re.sub(r"^[^A-Za-z0-9]+", "", re.sub(r"[^A-Za-z0-9._-]+", "-", s)) or "policy"


class TorchBackend:
    def __init__(
        self,
        model: torch.nn.Module,
        model_name: str,
        settings: TrainerSettings,
        device: str | torch.device,
        parallel: DataParallel | None = None,
    ):
        self.settings = settings
        #: Data-parallel group (torchrun); None in one process.
        self.parallel = parallel
        self.mode = settings.mode
        self.model_name = model_name
        self.device = torch.device(device)
        self.version = 0
        self.steps = 0
        self.tokens_trained = 0
        if settings.mode == "lora":
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(
                model,
                LoraConfig(
                    r=settings.lora_rank,
                    lora_alpha=settings.lora_alpha,
                    lora_dropout=settings.lora_dropout,
                    target_modules=settings.lora_target_modules,
                    task_type="CAUSAL_LM",
                ),
            )
        elif settings.mode != "full":
            raise ValueError(f"mode must be lora or full, not {settings.mode}")
        if settings.kl_coef > 0 and settings.mode != "lora":
            raise ValueError("kl_coef needs a reference model: supported with LoRA (the base is the reference)")
        self.sharded = parallel is not None and parallel.sharded
        if self.sharded and settings.mode != "full":
            raise ValueError("FSDP sharding is for full fine-tuning; LoRA's trainable weights fit one device")
        #: The tiny model takes the tree's pair mask as booleans; a Hugging Face model as an additive 4D mask.
        self.bool_pair_mask = isinstance(model, TinyCausalLM)
        self.trainable = [p for p in model.parameters() if p.requires_grad]
        # Trainable weights are kept in fp32 or wider (Adam state too); compute runs under bf16 autocast on GPU.
        for p in self.trainable:
            if p.dtype in (torch.float16, torch.bfloat16):
                p.data = p.data.float()
        if settings.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if settings.mode == "lora":
                model.enable_input_require_grads()
        if self.sharded:
            assert parallel is not None
            self.model = parallel.wrap_fsdp(model)
            self.trainable = [p for p in self.model.parameters() if p.requires_grad]
        else:
            self.model = model.to(self.device)
        self.model.train()
        self.optimizer = torch.optim.AdamW(
            self.trainable, lr=settings.lr, betas=(settings.beta1, settings.beta2), weight_decay=settings.weight_decay
        )

    def _autocast(self):
        if self.device.type == "cuda":
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return nullcontext()

    def _collate(self, batch: list[Sample]):
        n = max(len(s.token_ids) for s in batch)

        def pad(rows, value, dtype):
            return torch.tensor([r + [value] * (n - len(r)) for r in rows], dtype=dtype, device=self.device)

        ids = pad([s.token_ids for s in batch], 0, torch.long)
        attn = pad([[1] * len(s.token_ids) for s in batch], 0, torch.long)
        mask = pad([s.loss_mask for s in batch], 0, torch.float32)
        old = pad([s.logprobs for s in batch], 0.0, torch.float32)
        adv = torch.tensor([s.advantage for s in batch], dtype=torch.float32, device=self.device)
        w = torch.tensor([s.weight for s in batch], dtype=torch.float32, device=self.device)
        return ids, attn, mask, old, adv, w

    def _logprobs(self, ids: torch.Tensor, attn: torch.Tensor) -> torch.Tensor:
        with self._autocast():
            logits = self.model(input_ids=ids, attention_mask=attn, use_cache=False).logits
        return token_logprobs(logits, ids)

    def _tree_logprobs(self, layout: TreeLayout) -> torch.Tensor:
        ids, positions, allowed = tree_inputs(layout, self.device)
        if self.bool_pair_mask:
            mask = allowed
        else:
            mask = additive_mask(allowed, torch.bfloat16 if self.device.type == "cuda" else self.trainable[0].dtype)
        with self._autocast():
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits
        return path_logprobs(logits[0], layout)

    def _micro_batches(self, samples: list[Sample]) -> list[tuple[list[Sample], TreeLayout | None, float]]:
        """This rank's passes: (samples, their trie or None for a flat padded batch, loss factor). Under FSDP
        every rank makes as many passes as the busiest one (each pass gathers the shards): a rank with fewer
        repeats the batch's first micro-batch with factor 0."""
        s = self.settings
        items: list[tuple[list[Sample], TreeLayout | None, float]]
        if s.prefix_tree:
            items = [(mb, layout, 1.0) for mb, layout in pack_tries(samples, s.micro_batch_tokens)]
            size = lambda it: len(it[1].token_ids) ** 2  # noqa: E731  dense masked attention: nodes squared
        else:
            items = [(mb, None, 1.0) for mb in micro_batches(samples, s.micro_batch_tokens)]
            size = lambda it: len(it[0]) * len(it[0][0].token_ids)  # noqa: E731
        if self.parallel is None:
            return items
        mine = self.parallel.shard(items, size)
        if not self.sharded:
            return mine
        filler = (items[0][0], items[0][1], 0.0)
        return mine + [filler] * (self.parallel.most_per_rank(items, size) - len(mine))

    def train_step(self, step: TrainStep) -> dict:
        """`epochs` optimizer steps over the batch (as the embedded engine), one version move."""
        t0 = time.perf_counter()
        s = self.settings
        total = sum(sum(x.loss_mask) for x in step.samples)
        loss = grad_norm = clip_fraction = kl = 0.0
        for _ in range(s.epochs):
            self.optimizer.zero_grad(set_to_none=True)
            loss_sum = clipped = kl_sum = 0.0
            # FSDP averages the gradients over the ranks; this scheme sums them (each loss is over the whole batch).
            scale = (self.parallel.world if self.sharded and self.parallel is not None else 1) / total
            for mb, layout, factor in self._micro_batches(step.samples):
                ids, attn, mask, old, adv, w = self._collate(mb)
                new = self._tree_logprobs(layout) if layout is not None else self._logprobs(ids, attn)
                ref = None
                if s.kl_coef > 0:
                    with torch.no_grad(), self.model.disable_adapter():
                        ref = self._logprobs(ids, attn)
                parts = ppo_clip_loss(new, old, mask, adv, w, s.clip_eps, ref, s.kl_coef)
                (parts.loss_sum * (scale * factor)).backward()
                loss_sum += float(parts.loss_sum.detach()) * factor
                clipped += parts.clipped * factor
                kl_sum += (parts.kl_sum or 0.0) * factor
            if self.parallel is not None:
                if not self.sharded:
                    self.parallel.sum_gradients(self.trainable)
                loss_sum, clipped, kl_sum = self.parallel.sum_floats([loss_sum, clipped, kl_sum])
            if self.sharded:
                norm = float(self.model.clip_grad_norm_(s.grad_clip))
            else:
                norm = float(torch.nn.utils.clip_grad_norm_(self.trainable, s.grad_clip))
            if not math.isfinite(norm):
                self.optimizer.zero_grad(set_to_none=True)
                raise RuntimeError(f"gradient norm is {norm}; the step was not applied")
            self.optimizer.step()
            loss += loss_sum / total
            grad_norm += norm
            clip_fraction += clipped / total
            kl += kl_sum / total
        self.optimizer.zero_grad(set_to_none=True)
        self.version += 1
        self.steps += 1
        self.tokens_trained += total
        n = s.epochs
        metrics = {
            "loss": loss / n,
            "tokens": total,
            "grad_norm": grad_norm / n,
            "clip_fraction": clip_fraction / n,
            "duration_ms": (time.perf_counter() - t0) * 1000.0,
        }
        if s.kl_coef > 0:
            metrics["kl"] = kl / n
        return metrics

    def gather_state(self) -> dict:
        """The full model state dict. FSDP: a collective every rank joins; rank 0 gets the dict, the others {}."""
        if self.sharded:
            assert self.parallel is not None
            return self.parallel.full_state_dict(self.model)
        return self.model.state_dict()

    def _refuse_checkpoint_when_sharded(self) -> None:
        if self.sharded:
            raise ProtocolError(
                501, "not_implemented", "save and load of an FSDP-sharded trainer are not implemented (issue 23); publish works", "dir"
            )

    @torch.no_grad()
    def score(self, token_ids: list[int]) -> list[float]:
        """Log-probs of each token given the ones before it (index 0 is 0), for checks (one process only)."""
        ids = torch.tensor([token_ids], dtype=torch.long, device=self.device)
        return self._logprobs(ids, torch.ones_like(ids))[0].tolist()

    def publish(self, request: Publish) -> dict:
        os.makedirs(self.settings.publish_dir, exist_ok=True)
        if self.mode == "lora":
            name = request.adapter_name or f"{_safe_name(self.model_name)}-v{self.version}"
            path = os.path.abspath(os.path.join(self.settings.publish_dir, name))
            self.model.save_pretrained(path)
            for url in request.load_into:
                try:
                    load_lora_adapter(url, name, path)
                except Exception as e:
                    raise ProtocolError(502, "publish_failed", f"adapter written to {path}; {e}", "load_into") from e
            return {"mode": "lora", "version": self.version, "adapter_name": name, "adapter_path": path}
        path = os.path.abspath(os.path.join(self.settings.publish_dir, f"v{self.version}"))
        state = {k: v.detach().to(self.settings.publish_dtype) for k, v in self.gather_state().items()}
        self.model.save_pretrained(path, state_dict=state)
        point_current_at(self.settings.publish_dir, path)
        if self.settings.keep_published > 0:
            prune_published(self.settings.publish_dir, self.settings.keep_published, self.version)
        for url in request.load_into:
            try:
                reload_weights(url, path)
            except Exception as e:
                raise ProtocolError(502, "publish_failed", f"weights written to {path}; {e}", "load_into") from e
        return {"mode": "full", "version": self.version, "path": path}

    def save(self, directory: str) -> None:
        self._refuse_checkpoint_when_sharded()
        os.makedirs(directory, exist_ok=True)
        self.model.save_pretrained(os.path.join(directory, "weights"))
        torch.save(self.optimizer.state_dict(), os.path.join(directory, "optimizer.pt"))
        with open(os.path.join(directory, STATE_FILE), "w") as f:
            json.dump({"version": self.version, "steps": self.steps, "tokens_trained": self.tokens_trained, "mode": self.mode, "model": self.model_name}, f)

    def load(self, directory: str) -> None:
        self._refuse_checkpoint_when_sharded()
        state_path = os.path.join(directory, STATE_FILE)
        if not os.path.exists(state_path):
            raise ProtocolError(404, "not_found", f"no checkpoint in {directory}", "dir")
        with open(state_path) as f:
            state = json.load(f)
        if state.get("mode") != self.mode:
            raise ProtocolError(400, "invalid_request", f"checkpoint is {state.get('mode')}, trainer is {self.mode}", "dir")
        weights = os.path.join(directory, "weights")
        if self.mode == "lora":
            from peft import set_peft_model_state_dict
            from safetensors.torch import load_file

            set_peft_model_state_dict(self.model, load_file(os.path.join(weights, "adapter_model.safetensors"), device=str(self.device)))
        else:
            loaded = type(self.model).from_pretrained(weights)
            self.model.load_state_dict(loaded.state_dict())
            del loaded
        self.optimizer.load_state_dict(torch.load(os.path.join(directory, "optimizer.pt"), map_location=self.device))
        self.version = int(state["version"])
        self.steps = int(state["steps"])
        self.tokens_trained = int(state["tokens_trained"])
