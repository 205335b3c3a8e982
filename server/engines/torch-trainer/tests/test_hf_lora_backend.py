"""The Hugging Face path: a tiny random Qwen2 in LoRA (peft) and full mode (needs transformers + peft)."""

import os
import tempfile
import unittest

from tests.torch_available import skip_reason

REASON = skip_reason("the Hugging Face + LoRA backend tests (tests/test_hf_lora_backend.py)", "torch", "transformers", "peft", "safetensors", optional=True)


def tiny_config():
    from transformers import Qwen2Config

    return Qwen2Config(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        tie_word_embeddings=True,
    )


def backend(mode, **kw):
    import torch

    from agentjet_trainer.backend import TorchBackend, TrainerSettings
    from agentjet_trainer.model_loading import build_model

    model = build_model(tiny_config(), torch.float32, seed=0)
    settings = TrainerSettings(mode=mode, lr=1e-3, lora_rank=4, lora_alpha=8, publish_dir=kw.pop("publish_dir", tempfile.mkdtemp()), **kw)
    return TorchBackend(model, "tiny/qwen2", settings, "cpu")


def step_of(samples, version=0):
    from agentjet_trainer.protocol import Sample, TrainStep

    return TrainStep(version, [Sample(**s) for s in samples])


@unittest.skipIf(REASON is not None, REASON or "")
class HfLoraBackendTest(unittest.TestCase):
    def merged_and_split(self, b):
        """One merged two-call sample and the two separate samples it replaces, with behaviour log-probs."""
        ids = [1, 5, 9, 11, 3, 4, 20, 21, 22]
        lp = b.score(ids)
        merged = {"token_ids": ids, "loss_mask": [0, 0, 1, 1, 0, 0, 1, 1, 1], "logprobs": [lp[i] if i in (2, 3, 6, 7, 8) else 0.0 for i in range(9)], "advantage": 1.0, "weight": 1.0}
        first = {"token_ids": ids[:4], "loss_mask": [0, 0, 1, 1], "logprobs": [0.0, 0.0, lp[2], lp[3]], "advantage": 1.0, "weight": 1.0}
        second = {"token_ids": ids, "loss_mask": [0, 0, 0, 0, 0, 0, 1, 1, 1], "logprobs": [0.0] * 6 + lp[6:9], "advantage": 1.0, "weight": 1.0}
        return merged, [first, second]

    def grads_after(self, b, samples):
        import torch

        from agentjet_trainer.loss import ppo_clip_loss
        from agentjet_trainer.backend import micro_batches

        step = step_of(samples)
        total = sum(sum(s.loss_mask) for s in step.samples)
        b.optimizer.zero_grad(set_to_none=True)
        for mb in micro_batches(step.samples, 1 << 20):
            ids, attn, mask, old, adv, w = b._collate(mb)
            parts = ppo_clip_loss(b._logprobs(ids, attn), old, mask, adv, w, 0.2)
            (parts.loss_sum / total).backward()
        g = torch.cat([p.grad.flatten() for p in b.trainable if p.grad is not None])
        b.optimizer.zero_grad(set_to_none=True)
        return g

    def test_merging_changes_what_is_computed_not_what_is_learned(self):
        import torch

        for mode in ("lora", "full"):
            with self.subTest(mode=mode):
                b = backend(mode)
                merged, split = self.merged_and_split(b)
                self.assertTrue(torch.allclose(self.grads_after(b, [merged]), self.grads_after(b, split), rtol=1e-4, atol=1e-6))

    def test_a_step_moves_the_version_and_the_policy(self):
        for mode in ("lora", "full"):
            with self.subTest(mode=mode):
                b = backend(mode)
                merged, _ = self.merged_and_split(b)
                before = b.score(merged["token_ids"])
                m = b.train_step(step_of([merged]))
                self.assertEqual(b.version, 1)
                self.assertEqual(m["tokens"], 5)
                self.assertGreater(m["grad_norm"], 0)
                after = b.score(merged["token_ids"])
                # A positive advantage raises the trained tokens' log-probs.
                self.assertGreater(sum(after[i] - before[i] for i in (2, 3, 6, 7, 8)), 0)

    def test_save_load_and_publish(self):
        from agentjet_trainer.protocol import Publish

        for mode in ("lora", "full"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as d:
                b = backend(mode, publish_dir=os.path.join(d, "pub"))
                merged, _ = self.merged_and_split(b)
                b.train_step(step_of([merged]))
                b.save(os.path.join(d, "ckpt"))
                saved = b.score(merged["token_ids"])
                b.train_step(step_of([merged], 1))
                b.load(os.path.join(d, "ckpt"))
                self.assertEqual(b.version, 1)
                for x, y in zip(b.score(merged["token_ids"]), saved):
                    self.assertAlmostEqual(x, y, places=5)
                out = b.publish(Publish(1, "tiny-v1"))
                self.assertEqual(out["mode"], mode)
                self.assertEqual(out["version"], 1)
                if mode == "lora":
                    self.assertTrue(os.path.exists(os.path.join(out["adapter_path"], "adapter_config.json")))
                else:
                    self.assertTrue(os.path.exists(os.path.join(out["path"], "config.json")))


if __name__ == "__main__":
    unittest.main()
