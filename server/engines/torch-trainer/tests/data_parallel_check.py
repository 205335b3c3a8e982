"""Run by torchrun (2+ processes, gloo): the data-parallel update must equal the one-process update.

Rank 0 drives the ranks through Rank0Backend (the broadcast the HTTP service uses), the others run
serve_worker; rank 0 also trains a one-process twin on the same batches. Prints `DP-CHECK <json>`, and
writes the JSON to the file named by DP_CHECK_OUT when set (torchrun's tee may put another rank's output on
the same line of its stdout).
"""

import json
import os
import sys

import torch
import torch.distributed as dist

from agentjet_trainer.backend import micro_batches
from agentjet_trainer.data_parallel import DataParallel, Rank0Backend, serve_worker
from tests.tiny import batch, step_of, tiny_backend

STEPS = 2
#: Small micro-batches, so the batch is split over both ranks (several micro-batches each).
BUDGET = 24
#: float64, so that the only difference left (the order the micro-batch gradients are summed in) is
#: far below what Adam's normalisation could amplify into a visible weight difference.
DTYPE = torch.float64

parallel = DataParallel.init("cpu")
backend = tiny_backend(parallel=parallel, micro_batch_tokens=BUDGET, dtype=DTYPE)
metrics = []
if parallel.rank == 0:
    served = Rank0Backend(backend, parallel)
    for v in range(STEPS):
        metrics.append(served.train_step(step_of(batch(9, seed=v), v)))
    served.stop()
else:
    serve_worker(backend, parallel)

flat = torch.cat([p.detach().reshape(-1) for p in backend.trainable])
ref = flat.clone()
dist.broadcast(ref, 0)
spread = (flat - ref).abs().max()
dist.all_reduce(spread, op=dist.ReduceOp.MAX)

if parallel.rank == 0:
    twin = tiny_backend(micro_batch_tokens=BUDGET, dtype=DTYPE)
    twin_metrics = [twin.train_step(step_of(batch(9, seed=v), v)) for v in range(STEPS)]
    single = torch.cat([p.detach().reshape(-1) for p in twin.trainable])
    start = torch.cat([p.detach().reshape(-1) for p in tiny_backend(dtype=DTYPE).trainable])
    report = json.dumps({
        "world": parallel.world,
        "micro_batches": len(micro_batches(step_of(batch(9, seed=0)).samples, BUDGET)),
        "versions": [backend.version, twin.version],
        "max_diff_to_single": float((flat - single).abs().max()),
        "moved": float((single - start).abs().max()),
        "max_spread_between_ranks": float(spread),
        "loss": [[m["loss"] for m in metrics], [m["loss"] for m in twin_metrics]],
        "tokens": [[m["tokens"] for m in metrics], [m["tokens"] for m in twin_metrics]],
        "grad_norm": [[m["grad_norm"] for m in metrics], [m["grad_norm"] for m in twin_metrics]],
    })
    print("DP-CHECK " + report, flush=True)
    if os.environ.get("DP_CHECK_OUT"):
        with open(os.environ["DP_CHECK_OUT"], "w", encoding="utf-8") as f:
            f.write(report)
parallel.close()
sys.exit(0)
