import unittest

from tests.torch_available import skip_reason

REASON = skip_reason("the tiny model's tests (tests/test_tiny_model.py)", "torch")


@unittest.skipIf(REASON is not None, REASON or "")
class TinyModelTest(unittest.TestCase):
    def test_it_is_causal_and_padding_does_not_change_real_tokens(self):
        import torch

        from agentjet_trainer.tiny_model import TinyConfig, build_tiny

        m = build_tiny(TinyConfig(vocab_size=32, max_positions=16)).eval()
        ids = torch.tensor([[1, 2, 3, 4, 5]])
        full = m(ids).logits
        prefix = m(ids[:, :3]).logits
        self.assertTrue(torch.allclose(full[:, :3], prefix, atol=1e-5))
        padded = m(torch.tensor([[1, 2, 3, 0, 0]]), attention_mask=torch.tensor([[1, 1, 1, 0, 0]])).logits
        self.assertTrue(torch.allclose(padded[:, :3], prefix, atol=1e-5))

    def test_an_explicit_pair_mask_with_positions_packs_two_sequences_in_one_row(self):
        import torch

        from agentjet_trainer.tiny_model import TinyConfig, build_tiny

        m = build_tiny(TinyConfig(vocab_size=32, max_positions=16)).eval()
        a, b = [1, 2, 3], [7, 8]
        allowed = torch.zeros(1, 5, 5, dtype=torch.bool)
        allowed[0, :3, :3] = torch.ones(3, 3).tril().bool()
        allowed[0, 3:, 3:] = torch.ones(2, 2).tril().bool()
        packed = m(torch.tensor([a + b]), attention_mask=allowed, position_ids=torch.tensor([[0, 1, 2, 0, 1]])).logits
        self.assertTrue(torch.allclose(packed[:, :3], m(torch.tensor([a])).logits, atol=1e-5))
        self.assertTrue(torch.allclose(packed[:, 3:], m(torch.tensor([b])).logits, atol=1e-5))


if __name__ == "__main__":
    unittest.main()
