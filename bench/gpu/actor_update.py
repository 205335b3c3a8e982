"""Actor-update wall time, unmerged vs merged batches, on randomly initialised Qwen2.5-shaped models.

The update is the reference trainer's own step (server/engines/torch-trainer: forward + PPO-clip loss +
backward over token-budget micro-batches + grad clip + AdamW), timed with CUDA synchronisation. The
learning rate is 0, so both batches see the same weights and their token-mean losses must agree:
merging changes what is computed, not what is learned.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "server", "engines", "torch-trainer"))

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, Qwen2Config  # noqa: E402

from agentjet_trainer.backend import TorchBackend, TrainerSettings, micro_batches  # noqa: E402
from agentjet_trainer.model_loading import dtype_kwargs  # noqa: E402
from agentjet_trainer.protocol import Sample, TrainStep  # noqa: E402
from workloads import SampleShape, describe, merged, unmerged, workload  # noqa: E402

SHAPES = {
    "Qwen2.5-0.5B": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2),
    "Qwen2.5-1.5B": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2),
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2),
}
TARGET = 6.25


def qwen_config(shape: str, vocab: int) -> Qwen2Config:
    return Qwen2Config(
        vocab_size=vocab,
        max_position_embeddings=32768,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        **SHAPES[shape],
    )


class TokenSource:
    """Deterministic token ids per message id, so a message has the same ids in every sample holding it."""

    def __init__(self, vocab: int):
        self.vocab = vocab
        self.cache: dict[int, list[int]] = {}

    def ids(self, msg) -> list[int]:
        got = self.cache.get(msg.id)
        if got is None:
            rng = random.Random(msg.id)
            got = [rng.randrange(self.vocab) for _ in range(msg.tokens)]
            self.cache[msg.id] = got
        return got


def to_samples(shapes: list[SampleShape], advantages: list[float], tokens: TokenSource) -> list[Sample]:
    behaviour = -math.log(tokens.vocab)
    out = []
    for shape, adv in zip(shapes, advantages):
        ids: list[int] = []
        mask: list[int] = []
        for m in shape.messages:
            ids += tokens.ids(m)
            mask += [1 if m.id in shape.trained else 0] * m.tokens
        out.append(Sample(ids, mask, [behaviour if x else 0.0 for x in mask], adv, 1.0))
    return out


def build_batch(groups, split, tokens: TokenSource, seed: int) -> list[Sample]:
    rng = random.Random(seed)
    shapes: list[SampleShape] = []
    advs: list[float] = []
    for calls in groups:
        adv = rng.choice([-1.0, 1.0])
        ss = split(calls)
        shapes += ss
        advs += [adv] * len(ss)
    return to_samples(shapes, advs, tokens)


def padding_share(samples: list[Sample], budget: int) -> tuple[int, float]:
    mbs = micro_batches(samples, budget)
    padded = sum(len(mb[0].token_ids) * len(mb) for mb in mbs)
    real = sum(len(s.token_ids) for s in samples)
    return len(mbs), 1.0 - real / padded


def timed_step(backend: TorchBackend, samples: list[Sample], device: torch.device) -> tuple[float, dict]:
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    metrics = backend.train_step(TrainStep(backend.version, samples))
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0, metrics


def render(rows: list[dict], notes: list[str]) -> str:
    cols = [
        "model", "workload", "calls", "samples unmerged -> merged", "tokens unmerged -> merged", "micro-batches (padding)",
        "update s, unmerged", "update s, merged", "speedup", "loss unmerged / merged", "peak GiB",
    ]
    lines = ["## gpu: actor-update time, unmerged vs merged", "", f"| {' | '.join(cols)} |", f"|{'---|' * len(cols)}"]
    for r in rows:
        lines.append(
            "| " + " | ".join(
                str(x)
                for x in [
                    r["model"], r["workload"], r["calls"],
                    f"{r['unmerged_samples']} -> {r['merged_samples']}",
                    f"{r['unmerged_tokens']} -> {r['merged_tokens']} ({r['unmerged_tokens'] / r['merged_tokens']:.2f}x)",
                    f"{r['mb_unmerged']} ({r['pad_unmerged']:.0%}) -> {r['mb_merged']} ({r['pad_merged']:.0%})",
                    f"{r['t_unmerged']:.2f}", f"{r['t_merged']:.2f}", f"**{r['speedup']:.2f}x**",
                    f"{r['loss_unmerged']:.6f} / {r['loss_merged']:.6f}", f"{r['peak_gib']:.1f}",
                ]
            ) + " |"
        )
    lines += [""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--models", default="Qwen2.5-0.5B,Qwen2.5-1.5B")
    p.add_argument("--appworld-episodes", type=int, default=4)
    p.add_argument("--werewolves-agents", type=int, default=3)
    p.add_argument("--micro-batch-tokens", type=int, default=16384)
    p.add_argument("--merged-repeats", type=int, default=3)
    p.add_argument("--budget-s", type=float, default=420.0, help="Skip measurements that would start past this")
    p.add_argument("--no-gradient-checkpointing", action="store_true")
    p.add_argument("--smoke", action="store_true", help="Tiny model and workloads, CPU allowed: checks the script runs")
    args = p.parse_args()
    start = time.perf_counter()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = 151936
    models = args.models.split(",")
    scale = {"appworld": args.appworld_episodes, "werewolves": args.werewolves_agents}
    if args.smoke:
        models, vocab, scale = ["tiny"], 512, {"appworld": 1, "werewolves": 1}
    notes = [
        f"device: {torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu'}; torch {torch.__version__}",
        "update = one reference-trainer step (server/engines/torch-trainer TorchBackend, full fine-tuning): forward + PPO-clip "
        f"token-mean loss + backward over <= {args.micro_batch_tokens}-token padded micro-batches (longest first) + grad clip + AdamW; "
        "fp32 master weights, bf16 autocast, sdpa attention"
        + ("" if args.no_gradient_checkpointing else ", gradient checkpointing"),
        "lr 0, so both batches see the same weights: equal losses show merging changes what is computed, not what is learned",
        "AppWorld shape: 20-25 steps; prompt ~1.7k tokens, answers 100-250, execution outputs 150-450; everything kept (one timeline)",
        "Werewolves shape: 26-32 calls per wolf agent; rules ~1.1k, events 120-320, speeches 50-140; every 6th call a structured "
        "decision whose format prompt and answer are not kept in memory (its own timeline)",
        f"merged time: median of {args.merged_repeats}; unmerged: one run, after a warm-up step",
    ]
    rows: list[dict] = []
    for model_name in models:
        cfg = qwen_config(model_name, vocab)
        torch.manual_seed(0)
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", **dtype_kwargs(torch.float32))
        settings = TrainerSettings(
            mode="full", lr=0.0, micro_batch_tokens=args.micro_batch_tokens, gradient_checkpointing=not args.no_gradient_checkpointing
        )
        backend = TorchBackend(model, model_name, settings, device)
        tokens = TokenSource(vocab)
        for wl in ("appworld", "werewolves"):
            if time.perf_counter() - start > args.budget_s:
                notes.append(f"SKIPPED {model_name} / {wl}: past the {args.budget_s:.0f} s budget")
                continue
            groups = workload(wl, 0, scale[wl])
            d = describe(groups)
            batch_u = build_batch(groups, unmerged, tokens, 1)
            batch_m = build_batch(groups, merged, tokens, 1)
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats()
            try:
                timed_step(backend, batch_m, device)
                t_u, m_u = timed_step(backend, batch_u, device)
                t_ms = []
                m_m = {}
                for _ in range(args.merged_repeats):
                    t, m_m = timed_step(backend, batch_m, device)
                    t_ms.append(t)
            except torch.cuda.OutOfMemoryError as e:
                backend.optimizer.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
                notes.append(f"FAILED {model_name} / {wl}: out of memory ({str(e).splitlines()[0][:120]})")
                write(args.out, rows, notes)
                continue
            t_m = statistics.median(t_ms)
            mb_u, pad_u = padding_share(batch_u, args.micro_batch_tokens)
            mb_m, pad_m = padding_share(batch_m, args.micro_batch_tokens)
            row = {
                "model": model_name,
                "workload": wl,
                **d,
                "mb_unmerged": mb_u,
                "pad_unmerged": pad_u,
                "mb_merged": mb_m,
                "pad_merged": pad_m,
                "t_unmerged": t_u,
                "t_merged": t_m,
                "t_merged_all": t_ms,
                "speedup": t_u / t_m,
                "loss_unmerged": m_u["loss"],
                "loss_merged": m_m["loss"],
                "tokens_trained": m_u["tokens"],
                "peak_gib": (torch.cuda.max_memory_allocated() / 2**30) if device.type == "cuda" else 0.0,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            write(args.out, rows, notes)
        del backend, model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    met = [r for r in rows if r["speedup"] >= TARGET]
    notes.append(f"target (paper): {TARGET}x actor-update reduction from merging; met on {len(met)} of {len(rows)} rows")
    notes.append(f"total wall time {time.perf_counter() - start:.0f} s")
    write(args.out, rows, notes)
    print(render(rows, notes))


def write(out: str, rows: list[dict], notes: list[str]) -> None:
    with open(os.path.join(out, "RESULTS-gpu.md"), "w") as f:
        f.write(render(rows, notes))
    with open(os.path.join(out, "results-gpu.json"), "w") as f:
        json.dump({"rows": rows, "notes": notes}, f, indent=2)


if __name__ == "__main__":
    main()
