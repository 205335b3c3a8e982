"""Actor-update wall time, unmerged vs merged vs prefix-tree batches, on randomly initialised Qwen2.5-shaped models.

The update is the reference trainer's own step (server/engines/torch-trainer: forward + PPO-clip loss +
backward over token-budget micro-batches + grad clip + AdamW), timed with CUDA synchronisation. Three
batches of one workload: unmerged (one sample per call), merged (timeline merging, flat padded
micro-batches) and tree (the merged samples packed into prefix tries, each trie one forward with the tree
attention mask: `TrainerSettings.prefix_tree`). The learning rate is 0, so all three see the same weights
and their token-mean losses must agree: merging and tries change what is computed, not what is learned.

`--smoke` runs the trainer's plain-torch tiny model on workloads of a few hundred tokens per sample: every
code path (workload building, the three timings, the results writer) in seconds on CPU, without transformers.
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

from agentjet_trainer.backend import TorchBackend, TrainerSettings, micro_batches  # noqa: E402
from agentjet_trainer.model_loading import build_model  # noqa: E402
from agentjet_trainer.protocol import Sample, TrainStep  # noqa: E402
from agentjet_trainer.tiny_model import TINY_MODEL_NAME, TinyConfig  # noqa: E402
from agentjet_trainer.tree_attention import pack_tries  # noqa: E402
from workloads import SampleShape, describe, merged, unmerged, workload  # noqa: E402

SHAPES = {
    "Qwen2.5-0.5B": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2),
    "Qwen2.5-1.5B": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2),
    # A seconds-long check of the Hugging Face path (sdpa, the additive 4D tree mask) on a GPU: --models qwen-tiny.
    "qwen-tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2),
}
TARGET = 6.25
BATCHES = ("unmerged", "merged", "tree")
#: --smoke: message lengths scaled down so a sample has a few hundred tokens; the call structure is kept.
SMOKE_TOKEN_SCALE = 0.03
SMOKE_VOCAB = 512
SMOKE_MICRO_BATCH_TOKENS = 1024


def build_policy(model_name: str, vocab: int, device: torch.device) -> torch.nn.Module:
    if model_name == TINY_MODEL_NAME:
        return build_model(TINY_MODEL_NAME, torch.float32, seed=0, tiny=TinyConfig(vocab_size=vocab, max_positions=2048)).to(device)
    from transformers import AutoModelForCausalLM, Qwen2Config

    from agentjet_trainer.model_loading import dtype_kwargs

    cfg = Qwen2Config(vocab_size=vocab, max_position_embeddings=32768, rms_norm_eps=1e-6, tie_word_embeddings=True, **SHAPES[model_name])
    torch.manual_seed(0)
    with torch.device(device):
        return AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", **dtype_kwargs(torch.float32))


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


def layout_of(samples: list[Sample], budget: int, tree: bool) -> dict:
    """What one step computes: micro-batches (tries), tokens through the model, the share that is padding."""
    real = sum(len(s.token_ids) for s in samples)
    if tree:
        packs = pack_tries(samples, budget)
        return {"samples": len(samples), "micro_batches": len(packs), "tokens": sum(len(t.token_ids) for _, t in packs), "padding": 0.0}
    mbs = micro_batches(samples, budget)
    padded = sum(len(mb[0].token_ids) * len(mb) for mb in mbs)
    return {"samples": len(samples), "micro_batches": len(mbs), "tokens": real, "padding": 1.0 - real / padded}


def timed_step(backend: TorchBackend, samples: list[Sample], device: torch.device) -> tuple[float, dict]:
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    metrics = backend.train_step(TrainStep(backend.version, samples))
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0, metrics


def measure(
    backend: TorchBackend, samples: list[Sample], device: torch.device, tree: bool, repeats: int, warm_up: bool
) -> tuple[list[float], dict, float]:
    """Wall times of `repeats` steps (after a warm-up step), the last step's metrics, the peak GiB."""
    backend.settings.prefix_tree = tree
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times: list[float] = []
    metrics: dict = {}
    for k in range(repeats + int(warm_up)):
        t, metrics = timed_step(backend, samples, device)
        if k >= int(warm_up):
            times.append(t)
    return times, metrics, (torch.cuda.max_memory_allocated() / 2**30) if device.type == "cuda" else 0.0


def ratio(x: float | None, bold: bool = False) -> str:
    """A speed-up, or "-" where either side of it did not run (a failed row leaves its ratios None)."""
    if x is None:
        return "-"
    return f"**{x:.2f}x**" if bold else f"{x:.2f}x"


def render(rows: list[dict], notes: list[str]) -> str:
    cols = [
        "model", "workload", "calls", "batch", "samples", "tokens computed", "micro-batches (padding)",
        "update s", "vs unmerged", "vs merged", "loss", "peak GiB",
    ]
    lines = [
        "## gpu: actor-update time, unmerged vs merged vs prefix tree",
        "",
        f"| {' | '.join(cols)} |",
        f"|{'---|' * len(cols)}",
    ]
    for r in rows:
        timed = r["t"] is not None
        lines.append(
            "| " + " | ".join(
                str(x)
                for x in [
                    r["model"], r["workload"], r["calls"], r["batch"],
                    f"{r['samples']}" + (f" in {r['micro_batches']} tries" if r["batch"] == "tree" else ""),
                    f"{r['tokens']} ({r['tokens_vs_unmerged']:.2f}x fewer)" if r["batch"] != "unmerged" else r["tokens"],
                    f"{r['micro_batches']} ({r['padding']:.0%})",
                    f"{r['t']:.3f}" if timed else "FAILED",
                    ratio(r["speedup_vs_unmerged"], bold=True) if r["batch"] != "unmerged" else ("1x" if timed else "-"),
                    ratio(r["speedup_vs_merged"]) if r["batch"] == "tree" else "-",
                    f"{r['loss']:.6f}" if timed else "-",
                    f"{r['peak_gib']:.1f}",
                ]
            ) + " |"
        )
    lines += [""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def write(out: str, rows: list[dict], notes: list[str]) -> None:
    with open(os.path.join(out, "RESULTS-gpu.md"), "w") as f:
        f.write(render(rows, notes))
    with open(os.path.join(out, "results-gpu.json"), "w") as f:
        json.dump({"rows": rows, "notes": notes}, f, indent=2)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--models", default="Qwen2.5-0.5B,Qwen2.5-1.5B")
    p.add_argument("--appworld-episodes", type=int, default=4)
    p.add_argument("--werewolves-agents", type=int, default=3)
    p.add_argument("--micro-batch-tokens", type=int, default=16384, help="Padded tokens per flat micro-batch; nodes per trie")
    p.add_argument("--repeats", type=int, default=3, help="Timed steps of the merged and tree batches (median), after a warm-up step")
    p.add_argument("--budget-s", type=float, default=420.0, help="Skip measurements that would start past this")
    p.add_argument("--no-gradient-checkpointing", action="store_true")
    p.add_argument(
        "--smoke", action="store_true", help="The plain-torch tiny model on short workloads, CPU: checks every code path in seconds"
    )
    args = p.parse_args()
    start = time.perf_counter()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab, token_scale, budget, checkpointing = 151936, 1.0, args.micro_batch_tokens, not args.no_gradient_checkpointing
    models = args.models.split(",")
    scale = {"appworld": args.appworld_episodes, "werewolves": args.werewolves_agents}
    if args.smoke:
        models, vocab, token_scale, budget, checkpointing = [TINY_MODEL_NAME], SMOKE_VOCAB, SMOKE_TOKEN_SCALE, SMOKE_MICRO_BATCH_TOKENS, False
        scale, args.repeats = {"appworld": 1, "werewolves": 1}, 1
    notes = [
        f"device: {torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu'}; torch {torch.__version__}",
        "update = one reference-trainer step (server/engines/torch-trainer TorchBackend, full fine-tuning): forward + PPO-clip "
        f"token-mean loss + backward over <= {budget}-token padded micro-batches (longest first) + grad clip + AdamW; "
        + ("fp32 master weights, bf16 autocast, sdpa attention" if device.type == "cuda" else "fp32")
        + (", gradient checkpointing" if checkpointing else ""),
        f"tree = the merged samples packed into prefix tries of <= {budget} nodes (samples ordered by tokens, as the TS packer), "
        "each trie one forward with the tree attention mask (a node attends to its root-to-node path, position = depth; "
        "additive 4D mask for Hugging Face models): a prefix shared by samples is computed once, but the masked attention is dense",
        "lr 0, so all three batches see the same weights: equal losses show merging and tries change what is computed, not what is learned",
        "AppWorld shape: 20-25 steps; prompt ~1.7k tokens, answers 100-250, execution outputs 150-450; everything kept (one timeline, "
        "so tries share nothing across episodes: tree ~ merged is the control)",
        "Werewolves shape: 26-32 calls per wolf agent; rules ~1.1k, events 120-320, speeches 50-140; every 6th call a structured "
        "decision whose format prompt and answer are not kept in memory (its own timeline, which shares the history before it "
        "with the main timeline: what a trie computes once)",
        f"update s: merged and tree the median of {args.repeats} steps after a warm-up step each; unmerged one step, after them",
    ]
    if args.smoke:
        notes.insert(1, f"SMOKE: the plain-torch tiny model (agentjet-tiny), vocab {vocab}, messages scaled by {token_scale}: checks the code, measures nothing")
    rows: list[dict] = []
    for model_name in models:
        model = build_policy(model_name, vocab, device)
        settings = TrainerSettings(mode="full", lr=0.0, micro_batch_tokens=budget, gradient_checkpointing=checkpointing)
        backend = TorchBackend(model, model_name, settings, device)
        tokens = TokenSource(vocab)
        for wl in ("appworld", "werewolves"):
            if time.perf_counter() - start > args.budget_s:
                notes.append(f"SKIPPED {model_name} / {wl}: past the {args.budget_s:.0f} s budget")
                continue
            groups = workload(wl, 0, scale[wl], token_scale)
            calls = describe(groups)["calls"]
            batches = {"unmerged": build_batch(groups, unmerged, tokens, 1), "merged": build_batch(groups, merged, tokens, 1)}
            batches["tree"] = batches["merged"]
            got: dict[str, dict] = {}
            # Unmerged last and once: the merged steps before it warmed the same kernels up, and it is the long one.
            for batch in ("merged", "tree", "unmerged"):
                row = {"model": model_name, "workload": wl, "calls": calls, "batch": batch, **layout_of(batches[batch], budget, batch == "tree")}
                try:
                    flat_once = batch == "unmerged"
                    times, metrics, peak = measure(backend, batches[batch], device, batch == "tree", 1 if flat_once else args.repeats, not flat_once)
                except Exception as e:  # noqa: BLE001  out of memory, or a model refusing the tree mask: the other rows still count
                    backend.optimizer.zero_grad(set_to_none=True)
                    if device.type == "cuda":
                        torch.cuda.empty_cache()
                    first_line = (str(e).splitlines() or [""])[0][:300]
                    notes.append(f"FAILED {model_name} / {wl} / {batch}: {type(e).__name__}: {first_line}")
                    print(notes[-1], file=sys.stderr, flush=True)
                    row.update(t=None, t_all=[], loss=None, tokens_trained=None, peak_gib=0.0)
                else:
                    row.update(t=statistics.median(times), t_all=times, loss=metrics["loss"], tokens_trained=metrics["tokens"], peak_gib=peak)
                got[batch] = row
            base, flat = got["unmerged"], got["merged"]
            for row in (got[b] for b in BATCHES):
                row["tokens_vs_unmerged"] = base["tokens"] / row["tokens"]
                ok = row["t"] is not None
                row["speedup_vs_unmerged"] = base["t"] / row["t"] if ok and base["t"] is not None else None
                row["speedup_vs_merged"] = flat["t"] / row["t"] if ok and flat["t"] is not None else None
                row["loss_vs_unmerged"] = abs(row["loss"] - base["loss"]) if ok and base["loss"] is not None else None
                rows.append(row)
                print(json.dumps(row), flush=True)
            write(args.out, rows, notes)
        backend.settings.prefix_tree = False
        del backend, model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    for batch in ("merged", "tree"):
        sped = [r["speedup_vs_unmerged"] for r in rows if r["batch"] == batch and r["speedup_vs_unmerged"] is not None]
        met = sum(1 for x in sped if x >= TARGET)
        notes.append(f"target (paper): {TARGET}x actor-update reduction from merging; {batch}: met on {met} of {len(sped)} workloads")
    diffs = [r["loss_vs_unmerged"] for r in rows if r["loss_vs_unmerged"] is not None]
    if diffs:
        notes.append(f"largest |loss - unmerged loss| over merged and tree rows: {max(diffs):.2e}")
    notes.append(f"total wall time {time.perf_counter() - start:.0f} s")
    write(args.out, rows, notes)
    print(render(rows, notes))


if __name__ == "__main__":
    main()
