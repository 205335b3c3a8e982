import unittest

from tests.torch_available import skip_reason

REASON = skip_reason("the loss tests (tests/test_loss.py)", "torch")


@unittest.skipIf(REASON is not None, REASON or "")
class LossTest(unittest.TestCase):
    def test_at_the_behaviour_policy_the_loss_is_minus_the_weighted_advantage(self):
        import torch

        from agentjet_trainer.loss import ppo_clip_loss

        lp = torch.tensor([[0.0, -1.0, -2.0, -0.5]])
        mask = torch.tensor([[0.0, 1.0, 1.0, 0.0]])
        parts = ppo_clip_loss(lp, lp.clone(), mask, torch.tensor([2.0]), torch.tensor([0.5]), 0.2)
        self.assertAlmostEqual(float(parts.loss_sum), -2.0 * 0.5 * 2)
        self.assertEqual(parts.tokens, 2.0)
        self.assertEqual(parts.clipped, 0.0)

    def test_the_ratio_is_clipped(self):
        import torch

        from agentjet_trainer.loss import ppo_clip_loss

        old = torch.tensor([[0.0, -1.0]])
        new = torch.tensor([[0.0, -0.5]], requires_grad=True)
        mask = torch.tensor([[0.0, 1.0]])
        parts = ppo_clip_loss(new, old, mask, torch.tensor([1.0]), torch.tensor([1.0]), 0.2)
        # ratio e^0.5 > 1.2 with A > 0: the clipped branch wins and carries no gradient.
        self.assertAlmostEqual(float(parts.loss_sum), -1.2, places=5)
        self.assertEqual(parts.clipped, 1.0)
        parts.loss_sum.backward()
        self.assertEqual(float(new.grad.abs().sum()), 0.0)

    def test_token_logprobs_shift(self):
        import torch

        from agentjet_trainer.loss import token_logprobs

        logits = torch.zeros(1, 3, 4)
        logits[0, 0, 2] = 10.0
        out = token_logprobs(logits, torch.tensor([[0, 2, 1]]))
        self.assertEqual(out.shape, (1, 3))
        self.assertEqual(float(out[0, 0]), 0.0)
        self.assertGreater(float(out[0, 1]), -0.01)


if __name__ == "__main__":
    unittest.main()
