"""Data-parallel training over torch.distributed (launched by torchrun): gloo on CPU, NCCL on GPUs.

Every rank holds the whole model and the same optimizer state. Rank 0 serves the trainer protocol and
broadcasts each mutating request to the other ranks; each rank runs forward/backward over its share of
the batch's micro-batches (balanced by padded tokens), the gradients are summed with one all-reduce,
and every rank applies the same clipped AdamW step, so the weights stay identical without a broadcast.
Because each micro-batch's loss is already divided by the WHOLE batch's trained-token count, the summed
gradient is exactly the single-process gradient (up to float summation order).

This is the DistributedDataParallel scheme with the all-reduce done once per step by hand (ranks may
hold different numbers of micro-batches, which DDP's per-backward hooks cannot express).

`shard="fsdp"` (CUDA only, torch >= 2.1) is for a model whose weights, gradients and Adam state do not fit
one GPU: FullyShardedDataParallel keeps 1/world of each on every rank and gathers a layer's weights for
its forward and backward. Every rank then makes the same number of forward/backward passes (a rank
with fewer micro-batches repeats one with loss weight 0), FSDP reduce-scatters the gradients after each
backward, and publish gathers the full weights on rank 0 (every rank joins).
"""

from __future__ import annotations

import datetime
import os
from typing import Any

import torch
import torch.distributed as dist

#: Idle workers wait in a broadcast for the next request; a trainer may sit idle for a long time.
DEFAULT_TIMEOUT_S = 7 * 24 * 3600


SHARD_MODES = ("none", "fsdp")
#: FullyShardedDataParallel with `use_orig_params`, `ModuleWrapPolicy` and CPU-offloaded full state dicts.
FSDP_MIN_TORCH = (2, 1)


class FsdpUnavailable(RuntimeError):
    """`--shard fsdp` asked for where FSDP cannot run; the message says why and what to use instead."""

    code = "AJ_ERR_FSDP_UNAVAILABLE"


def launched_by_torchrun() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def check_fsdp(device: str, torch_version: str = torch.__version__) -> None:
    """Raises FsdpUnavailable unless FSDP can shard the model here: CUDA devices and torch >= 2.1."""
    if not device.startswith("cuda"):
        raise FsdpUnavailable(
            f"--shard fsdp runs on CUDA GPUs only, not {device}: torch 1.13's FullyShardedDataParallel (Debian's "
            "python3-torch, the CPU CI's torch) runs on CUDA devices only and does not even import under Python "
            "3.11 (a dataclass with a mutable default in torch.distributed._shard), so no CPU path could be "
            "tested. On CPU, train data-parallel (no --shard) or use LoRA for a model that does not fit."
        )
    major, minor = (int("".join(c for c in x if c.isdigit()) or 0) for x in torch_version.split(".")[:2])
    if (major, minor) < FSDP_MIN_TORCH:
        raise FsdpUnavailable(f"--shard fsdp needs torch >= {'.'.join(map(str, FSDP_MIN_TORCH))}, this is torch {torch_version}")


class DataParallel:
    def __init__(self, device: torch.device, shard: str = "none"):
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.device = device
        #: FSDP: every rank holds 1/world of the weights, gradients and optimizer state.
        self.sharded = shard == "fsdp"

    @staticmethod
    def init(device: str, timeout_s: float = DEFAULT_TIMEOUT_S, shard: str = "none") -> "DataParallel":
        """Joins the torchrun group: NCCL for CUDA (one GPU per rank, by LOCAL_RANK), gloo for CPU."""
        if shard not in SHARD_MODES:
            raise ValueError(f"shard must be one of {', '.join(SHARD_MODES)}, not {shard}")
        if shard == "fsdp":
            check_fsdp(device)
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if device.startswith("cuda"):
            torch.cuda.set_device(local_rank)
            resolved = torch.device("cuda", local_rank)
            backend = "nccl"
        else:
            resolved = torch.device("cpu")
            backend = "gloo"
        if not dist.is_initialized():
            dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
        return DataParallel(resolved, shard)

    def _assign(self, items: list[Any], size: Any) -> list[tuple[int, Any]]:
        """(rank, item) pairs: largest first, each to the least loaded rank (the same on every rank)."""
        load = [0] * self.world
        out: list[tuple[int, Any]] = []
        for mb in sorted(items, key=size, reverse=True):
            r = min(range(self.world), key=lambda i: load[i])
            load[r] += size(mb)
            out.append((r, mb))
        return out

    def shard(self, items: list[Any], size: Any) -> list[Any]:
        """This rank's micro-batches."""
        return [mb for r, mb in self._assign(items, size) if r == self.rank]

    def most_per_rank(self, items: list[Any], size: Any) -> int:
        """The most micro-batches any rank gets from `shard`."""
        counts = [0] * self.world
        for r, _ in self._assign(items, size):
            counts[r] += 1
        return max(counts)

    def wrap_fsdp(self, model: torch.nn.Module) -> torch.nn.Module:
        """The model sharded over the ranks, one FSDP unit per transformer block (`_no_split_modules`).
        The model may come on CPU: each unit moves to this rank's GPU as it is sharded."""
        from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy

        names = set(getattr(model, "_no_split_modules", None) or [])
        blocks = {type(m) for m in model.modules() if type(m).__name__ in names}
        return FullyShardedDataParallel(
            model,
            auto_wrap_policy=ModuleWrapPolicy(blocks) if blocks else None,
            sharding_strategy=ShardingStrategy.FULL_SHARD,
            device_id=self.device,
            use_orig_params=True,
            sync_module_states=True,
        )

    def full_state_dict(self, model: torch.nn.Module) -> dict:
        """An FSDP model's whole state dict, gathered to rank 0's CPU (every rank must call this; the others get {})."""
        from torch.distributed.fsdp import FullStateDictConfig, FullyShardedDataParallel, StateDictType

        config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
        with FullyShardedDataParallel.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
            state = model.state_dict()
        return state if self.rank == 0 else {}
        return mine

    def sum_gradients(self, params: list[torch.nn.Parameter]) -> None:
        """Sums every parameter's gradient over the ranks (a rank without micro-batches adds zeros)."""
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        offset = 0
        for p in params:
            n = p.numel()
            p.grad = flat[offset : offset + n].view_as(p).clone()
            offset += n

    def sum_floats(self, values: list[float]) -> list[float]:
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t.tolist()

    def broadcast(self, command: tuple | None) -> tuple:
        """Rank 0 sends `command`; the others receive it."""
        box = [command]
        dist.broadcast_object_list(box, src=0, device=self.device if self.device.type == "cuda" else None)
        return box[0]

    def close(self) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()


class Rank0Backend:
    """Rank 0's backend for the HTTP layer: broadcasts each request that every rank must run."""

    def __init__(self, backend: Any, parallel: DataParallel):
        self.inner = backend
        self.parallel = parallel

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def train_step(self, step: Any) -> dict:
        self.parallel.broadcast(("train_step", step))
        return self.inner.train_step(step)

    def load(self, directory: str) -> None:
        self.parallel.broadcast(("load", directory))
        self.inner.load(directory)

    def publish(self, request: Any) -> dict:
        if self.parallel.sharded:
            self.parallel.broadcast(("gather_state",))
        return self.inner.publish(request)

    def stop(self) -> None:
        self.parallel.broadcast(("stop",))


def serve_worker(backend: Any, parallel: DataParallel) -> None:
    """Ranks > 0: run what rank 0 broadcasts until it says stop. Save and publish run on rank 0 only
    (FSDP: every rank joins the gathering of the full weights for publish)."""
    while True:
        command = parallel.broadcast(None)
        if command[0] == "stop":
            return
        try:
            if command[0] == "train_step":
                backend.train_step(command[1])
            elif command[0] == "load":
                backend.load(command[1])
            elif command[0] == "gather_state":
                backend.gather_state()
        except Exception as e:  # rank 0 meets the same error and answers it; stay in step with it
            print(f"agentjet trainer rank {parallel.rank}: {command[0]} failed: {type(e).__name__}: {e}", flush=True)
