"""Shared builders for the tests that train the plain-torch tiny model (torch only)."""

import tempfile

VOCAB = 64


def tiny_backend(mode="full", seed=0, parallel=None, dtype=None, **settings):
    import torch

    from agentjet_trainer.backend import TorchBackend, TrainerSettings
    from agentjet_trainer.model_loading import build_model
    from agentjet_trainer.tiny_model import TinyConfig

    model = build_model("agentjet-tiny", dtype or torch.float32, seed=seed, tiny=TinyConfig(vocab_size=VOCAB, max_positions=64))
    settings.setdefault("publish_dir", tempfile.mkdtemp())
    settings.setdefault("lr", 1e-2)
    return TorchBackend(model, "agentjet-tiny", TrainerSettings(mode=mode, publish_dtype=torch.float32, **settings), "cpu", parallel)


def step_of(samples, version=0):
    from agentjet_trainer.protocol import Sample, TrainStep

    return TrainStep(version, [Sample(**s) for s in samples])


def batch(n=6, seed=1):
    """`n` samples of different lengths (prompt masked, completion trained), mixed-sign advantages."""
    import random

    rnd = random.Random(seed)
    out = []
    for i in range(n):
        length = rnd.randint(5, 14)
        prompt = rnd.randint(2, length - 2)
        ids = [rnd.randrange(VOCAB) for _ in range(length)]
        mask = [0] * prompt + [1] * (length - prompt)
        lps = [0.0] * prompt + [-rnd.uniform(1.0, 5.0) for _ in range(length - prompt)]
        out.append({"token_ids": ids, "loss_mask": mask, "logprobs": lps, "advantage": (-1.0) ** i * (0.5 + i / n), "weight": 1.0})
    return out
