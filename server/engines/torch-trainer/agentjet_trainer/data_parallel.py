"""Data-parallel training over torch.distributed (launched by torchrun): gloo on CPU, NCCL on GPUs.

Every rank holds the whole model and the same optimizer state. Rank 0 serves the trainer protocol and
broadcasts each mutating request to the other ranks; each rank runs forward/backward over its share of
the batch's micro-batches (balanced by padded tokens), the gradients are summed with one all-reduce,
and every rank applies the same clipped AdamW step, so the weights stay identical without a broadcast.
Because each micro-batch's loss is already divided by the WHOLE batch's trained-token count, the summed
gradient is exactly the single-process gradient (up to float summation order).

This is the DistributedDataParallel scheme with the all-reduce done once per step by hand (ranks may
hold different numbers of micro-batches, which DDP's per-backward hooks cannot express).
"""

from __future__ import annotations

import datetime
import os
from typing import Any

import torch
import torch.distributed as dist

#: Idle workers wait in a broadcast for the next request; a trainer may sit idle for a long time.
DEFAULT_TIMEOUT_S = 7 * 24 * 3600


def launched_by_torchrun() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


class DataParallel:
    def __init__(self, device: torch.device):
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.device = device

    @staticmethod
    def init(device: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> "DataParallel":
        """Joins the torchrun group: NCCL for CUDA (one GPU per rank, by LOCAL_RANK), gloo for CPU."""
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
        return DataParallel(resolved)

    def shard(self, items: list[list[Any]], size: Any) -> list[list[Any]]:
        """This rank's micro-batches: largest first, each to the least loaded rank (the same on every rank)."""
        load = [0] * self.world
        mine: list[list[Any]] = []
        for mb in sorted(items, key=size, reverse=True):
            r = min(range(self.world), key=lambda i: load[i])
            load[r] += size(mb)
            if r == self.rank:
                mine.append(mb)
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

    def stop(self) -> None:
        self.parallel.broadcast(("stop",))


def serve_worker(backend: Any, parallel: DataParallel) -> None:
    """Ranks > 0: run what rank 0 broadcasts until it says stop. Save and publish run on rank 0 only."""
    while True:
        command = parallel.broadcast(None)
        if command[0] == "stop":
            return
        try:
            if command[0] == "train_step":
                backend.train_step(command[1])
            elif command[0] == "load":
                backend.load(command[1])
        except Exception as e:  # rank 0 meets the same error and answers it; stay in step with it
            print(f"agentjet trainer rank {parallel.rank}: {command[0]} failed: {type(e).__name__}: {e}", flush=True)
