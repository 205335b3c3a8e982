"""The trainer's torch code for real on CPU: the plain-torch tiny model, full-weight updates."""

import os
import tempfile
import unittest

from tests.tiny import batch, step_of, tiny_backend
from tests.torch_available import skip_reason

REASON = skip_reason("the tiny-model backend tests (tests/test_tiny_backend.py)", "torch")


def grads_after(b, samples, budget):
    """The accumulated gradient of one batch, without an optimizer step."""
    import torch

    from agentjet_trainer.backend import micro_batches
    from agentjet_trainer.loss import ppo_clip_loss

    step = step_of(samples)
    total = sum(sum(s.loss_mask) for s in step.samples)
    b.optimizer.zero_grad(set_to_none=True)
    for mb in micro_batches(step.samples, budget):
        ids, attn, mask, old, adv, w = b._collate(mb)
        (ppo_clip_loss(b._logprobs(ids, attn), old, mask, adv, w, 0.2).loss_sum / total).backward()
    g = torch.cat([p.grad.flatten() for p in b.trainable])
    b.optimizer.zero_grad(set_to_none=True)
    return g


@unittest.skipIf(REASON is not None, REASON or "")
class TinyBackendTest(unittest.TestCase):
    def test_log_probs_are_normalised_and_match_the_logits(self):
        import torch

        b = tiny_backend()
        ids = [3, 9, 1, 40, 7]
        lp = b.score(ids)
        self.assertEqual(lp[0], 0.0)
        with torch.no_grad():
            logits = b.model(torch.tensor([ids])).logits[0]
        for i in range(1, len(ids)):
            self.assertAlmostEqual(lp[i], float(torch.log_softmax(logits[i - 1], -1)[ids[i]]), places=5)

    def test_micro_batching_changes_the_memory_not_the_gradient(self):
        import torch

        b = tiny_backend()
        samples = batch(8)
        whole = grads_after(b, samples, 1 << 20)
        one_by_one = grads_after(b, samples, 1)
        self.assertGreater(float(whole.abs().sum()), 0)
        self.assertTrue(torch.allclose(whole, one_by_one, rtol=1e-4, atol=1e-7))

    def test_merging_changes_what_is_computed_not_what_is_learned(self):
        import torch

        b = tiny_backend()
        ids = [1, 5, 9, 11, 3, 4, 20, 21, 22]
        lp = b.score(ids)
        merged = {"token_ids": ids, "loss_mask": [0, 0, 1, 1, 0, 0, 1, 1, 1], "logprobs": [lp[i] if i in (2, 3, 6, 7, 8) else 0.0 for i in range(9)], "advantage": 1.0, "weight": 1.0}
        first = {"token_ids": ids[:4], "loss_mask": [0, 0, 1, 1], "logprobs": [0.0, 0.0, lp[2], lp[3]], "advantage": 1.0, "weight": 1.0}
        second = {"token_ids": ids, "loss_mask": [0] * 6 + [1, 1, 1], "logprobs": [0.0] * 6 + lp[6:9], "advantage": 1.0, "weight": 1.0}
        self.assertTrue(torch.allclose(grads_after(b, [merged], 1 << 20), grads_after(b, [first, second], 1 << 20), rtol=1e-4, atol=1e-7))

    def test_a_full_weight_step_moves_every_weight_and_the_policy(self):
        import torch

        b = tiny_backend(lr=1e-2)
        sample = {"token_ids": [1, 5, 9, 11, 3], "loss_mask": [0, 0, 1, 1, 1], "logprobs": [0.0, 0.0] + b.score([1, 5, 9, 11, 3])[2:], "advantage": 1.0, "weight": 1.0}
        before_lp = b.score(sample["token_ids"])
        before = [p.detach().clone() for p in b.trainable]
        m = b.train_step(step_of([sample]))
        self.assertEqual((b.version, b.steps, m["tokens"]), (1, 1, 3))
        self.assertGreater(m["grad_norm"], 0)
        self.assertAlmostEqual(m["clip_fraction"], 0.0)
        # Full fine-tuning: the embedding, attention and MLP weights all move.
        moved = sum(1 for p, q in zip(b.trainable, before) if not torch.equal(p, q))
        self.assertEqual(moved, len(before))
        after_lp = b.score(sample["token_ids"])
        self.assertGreater(sum(after_lp[i] - before_lp[i] for i in (2, 3, 4)), 0)

    def test_save_load_restores_weights_optimizer_and_version(self):
        with tempfile.TemporaryDirectory() as d:
            b = tiny_backend()
            samples = batch(4)
            b.train_step(step_of(samples))
            b.save(os.path.join(d, "ckpt"))
            b.train_step(step_of(samples, 1))
            after_two = b.score(samples[0]["token_ids"])
            b.load(os.path.join(d, "ckpt"))
            self.assertEqual((b.version, b.steps), (1, 1))
            # The same second step from the restored state lands on the same weights (Adam moments restored).
            b.train_step(step_of(samples, 1))
            for x, y in zip(b.score(samples[0]["token_ids"]), after_two):
                self.assertAlmostEqual(x, y, places=5)

    def test_publish_writes_the_version_and_points_current_at_it(self):
        from agentjet_trainer.protocol import Publish
        from agentjet_trainer.tiny_model import TinyCausalLM

        with tempfile.TemporaryDirectory() as d:
            b = tiny_backend(publish_dir=d)
            b.train_step(step_of(batch(3)))
            out = b.publish(Publish(1))
            self.assertEqual(out, {"mode": "full", "version": 1, "path": os.path.join(os.path.realpath(d), "v1")})
            self.assertEqual(os.readlink(os.path.join(d, "current")), "v1")
            ids = batch(1)[0]["token_ids"]
            reloaded = TinyCausalLM.from_pretrained(os.path.join(d, "current"))
            twin = tiny_backend()
            twin.model.load_state_dict(reloaded.state_dict())
            for x, y in zip(twin.score(ids), b.score(ids)):
                self.assertAlmostEqual(x, y, places=5)

    def test_keep_published_removes_the_older_versions(self):
        from agentjet_trainer.protocol import Publish

        with tempfile.TemporaryDirectory() as d:
            b = tiny_backend(publish_dir=d, keep_published=2)
            b.publish(Publish(0))
            for v in range(3):
                b.train_step(step_of(batch(2), v))
                b.publish(Publish(v + 1))
            self.assertEqual(sorted(os.listdir(d)), ["current", "v2", "v3"])
            self.assertEqual(os.readlink(os.path.join(d, "current")), "v3")

    def test_a_non_finite_gradient_is_refused_and_the_version_stays(self):
        b = tiny_backend()
        bad = batch(1)[0]
        bad["advantage"] = float("inf")
        with self.assertRaises(RuntimeError):
            b.train_step(step_of([bad]))
        self.assertEqual(b.version, 0)


if __name__ == "__main__":
    unittest.main()
