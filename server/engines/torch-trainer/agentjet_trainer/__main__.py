"""python -m agentjet_trainer --model Qwen/Qwen2.5-7B-Instruct --mode lora --port 8800 --publish-dir /shared/publish

More GPUs (data-parallel, one process per GPU): torchrun --nproc_per_node 4 -m agentjet_trainer ...
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="agentjet_trainer", description="agentjet trainer service (trainer protocol v1)")
    p.add_argument(
        "--model",
        required=True,
        help="Hugging Face name or local path of the policy model, or agentjet-tiny (a plain-torch model for CPU tests)",
    )
    p.add_argument("--vocab-size", type=int, default=512, help="agentjet-tiny only: its vocabulary (>= the tokenizer's)")
    p.add_argument("--max-positions", type=int, default=4096, help="agentjet-tiny only: the longest sequence")
    p.add_argument("--random-init", action="store_true", help="Build the model from its config with random weights (tests, benchmarks)")
    p.add_argument("--mode", choices=["lora", "full"], default="lora")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8800)
    p.add_argument("--api-key", default=os.environ.get("AGENTJET_TRAINER_API_KEY"), help="Require this bearer key (default $AGENTJET_TRAINER_API_KEY)")
    p.add_argument("--device", default="cuda", help="cuda, cuda:1, cpu (under torchrun: cuda means one GPU per rank, by LOCAL_RANK)")
    p.add_argument("--publish-dir", default="./publish", help="Where published adapters/weights go; the inference engine must read it")
    p.add_argument(
        "--keep-published",
        type=int,
        default=0,
        help="Full mode: keep only the newest N published v<k> folders (each a whole model); 0 keeps every one",
    )
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--clip-eps", type=float, default=0.2)
    p.add_argument("--kl-coef", type=float, default=0.0, help="KL penalty to the base model (LoRA only); 0 disables")
    p.add_argument("--epochs", type=int, default=1, help="Optimizer steps over each batch")
    p.add_argument("--micro-batch-tokens", type=int, default=16384)
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=32)
    p.add_argument("--lora-dropout", type=float, default=0.0)
    p.add_argument("--lora-target-modules", default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    p.add_argument("--gradient-checkpointing", action="store_true")
    p.add_argument(
        "--prefix-tree",
        action="store_true",
        help="Micro-batches are prefix tries scored with a tree attention mask: shared prefixes computed once, the same step",
    )
    p.add_argument(
        "--shard",
        choices=["none", "fsdp"],
        default="none",
        help="Under torchrun: fsdp shards weights, gradients and Adam state over the GPUs (full mode, CUDA, torch >= 2.1)",
    )
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def refusal(args: argparse.Namespace, cuda_available: bool) -> str | None:
    """Why these flags cannot start here, in words (they ended in a traceback from deep inside torch or peft)."""
    if args.model == "agentjet-tiny" and args.mode != "full":
        return "--model agentjet-tiny trains full weights only: add --mode full (the default, lora, needs a Hugging Face model and peft)"
    if args.device.startswith("cuda") and not cuda_available:
        return f"--device {args.device} (the default is cuda) but this torch sees no CUDA GPU: pass --device cpu to train on the CPU (tiny models), or check the GPU and the CUDA build of torch"
    return None


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import torch

    why = refusal(args, torch.cuda.is_available())
    if why is not None:
        sys.exit(f"agentjet trainer: {why}")

    from .backend import CURRENT_LINK, TorchBackend, TrainerSettings
    from .data_parallel import DataParallel, FsdpUnavailable, Rank0Backend, check_fsdp, launched_by_torchrun, serve_worker
    from .http_server import make_server
    from .model_loading import build_model
    from .protocol import Publish
    from .tiny_model import TinyConfig

    if args.shard == "fsdp":
        try:
            check_fsdp(args.device)
        except FsdpUnavailable as e:
            sys.exit(f"agentjet trainer: {e}")
        if args.mode != "full" or not launched_by_torchrun():
            sys.exit("agentjet trainer: --shard fsdp needs --mode full under torchrun (one process per GPU)")
    parallel = DataParallel.init(args.device, shard=args.shard) if launched_by_torchrun() else None
    device = parallel.device if parallel is not None else torch.device(args.device)
    on_gpu = device.type == "cuda"
    # LoRA keeps the frozen base in bf16 on GPU; full fine-tuning keeps fp32 master weights.
    dtype = torch.bfloat16 if args.mode == "lora" and on_gpu else torch.float32
    tiny = TinyConfig(vocab_size=args.vocab_size, max_positions=args.max_positions)
    model = build_model(args.model, dtype, random_init=args.random_init, seed=args.seed, tiny=tiny)
    # Every other trainer setting comes from the flag of the same name.
    flags = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainerSettings) if hasattr(args, f.name)}
    flags["lora_target_modules"] = [m for m in args.lora_target_modules.split(",") if m]
    settings = TrainerSettings(**flags, publish_dtype=torch.bfloat16 if on_gpu else torch.float32)
    backend = TorchBackend(model, args.model, settings, device, parallel)
    if parallel is not None and parallel.rank > 0:
        serve_worker(backend, parallel)
        parallel.close()
        return
    served = Rank0Backend(backend, parallel) if parallel is not None else backend
    if args.mode == "full" and not os.path.lexists(os.path.join(settings.publish_dir, CURRENT_LINK)):
        # Replicas start from <publish-dir>/current and reload from it: version 0 must be there first.
        print(f"agentjet trainer: publishing version 0 to {served.publish(Publish(0))['path']}", flush=True)
    server = make_server(served, args.host, args.port, args.api_key)
    signal.signal(signal.SIGTERM, _interrupt)
    ranks = f", {parallel.world} ranks ({'nccl' if on_gpu else 'gloo'}{', fsdp' if parallel.sharded else ''})" if parallel is not None else ""
    print(f"agentjet trainer: protocol 1, {args.mode}, {args.model}{ranks}, listening on http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if isinstance(served, Rank0Backend):
            served.stop()
            served.parallel.close()


if __name__ == "__main__":
    main(sys.argv[1:])
