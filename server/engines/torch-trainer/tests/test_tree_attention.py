import random
import unittest

from tests.torch_available import skip_reason

REASON = skip_reason("the tree-attention tests (tests/test_tree_attention.py)", "torch")


def branching_samples(rng: random.Random, vocab: int):
    """n > 1 branches of one prompt, retries (a cut of an earlier sample), a prefix of another, a duplicate."""
    from agentjet_trainer.protocol import Sample

    prompt = [rng.randrange(vocab) for _ in range(rng.randint(2, 6))]
    out: list[Sample] = []
    for _ in range(rng.randint(2, 8)):
        kind = rng.choice(["prompt", "prompt", "retry", "prefix", "duplicate", "fresh"])
        if kind == "duplicate" and out:
            out.append(rng.choice(out))
            continue
        if kind == "prefix" and out:
            base = rng.choice(out).token_ids
            ids = base[: rng.randint(2, len(base))] if len(base) >= 2 else base + [1]
        else:
            head = prompt if kind in ("prompt", "retry") or not out else []
            if kind == "retry" and out:
                base = rng.choice(out).token_ids
                head = base[: rng.randint(1, len(base))]
            ids = head + [rng.randrange(vocab) for _ in range(rng.randint(1, 6))]
            if len(ids) < 2:
                ids = ids + [rng.randrange(vocab)]
        mask = [0] + [rng.choice([0, 1]) for _ in ids[1:]]
        mask[-1] = 1
        lps = [(-1.0 + rng.uniform(-0.3, 0.3)) if m else 0.0 for m in mask]
        out.append(Sample(ids, mask, lps, rng.uniform(-2, 2), rng.choice([0.5, 1.0, 2.0])))
    return out


def layout_of(samples):
    """
    The trie the TS side sends (server/training/prefix-tree.ts builds the same one), built here another way
    than `build_layout` so that the two check each other: a node per distinct prefix, in first-seen order.
    """
    from agentjet_trainer.tree_attention import TreeLayout

    node_of: dict[tuple[int, ...], int] = {}
    for s in samples:
        for end in range(1, len(s.token_ids) + 1):
            node_of.setdefault(tuple(s.token_ids[:end]), len(node_of))
    ids = [prefix[-1] for prefix in node_of]
    parents = [node_of.get(prefix[:-1], -1) for prefix in node_of]
    leaves = [node_of[tuple(s.token_ids)] for s in samples]
    return TreeLayout(ids, parents, leaves)


@unittest.skipIf(REASON is not None, REASON or "")
class TreeAttentionTest(unittest.TestCase):
    def test_a_branch_sees_its_path_and_never_a_sibling(self):
        from agentjet_trainer.tree_attention import TreeLayout, tree_inputs

        # 0 -> 1 -> {2, 3}: nodes 2 and 3 are sibling branches of one prompt.
        ids, positions, allowed = tree_inputs(TreeLayout([5, 6, 7, 8], [-1, 0, 1, 1], [2, 3]))
        self.assertEqual(positions.tolist(), [[0, 1, 2, 2]])
        self.assertEqual(allowed[0].int().tolist(), [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 0, 1]])
        self.assertEqual(ids.tolist(), [[5, 6, 7, 8]])

    def test_loss_and_gradients_equal_the_flat_batch_on_random_branching_timelines(self):
        import torch

        from agentjet_trainer.loss import ppo_clip_loss
        from agentjet_trainer.tiny_model import TinyConfig, build_tiny
        from agentjet_trainer.tree_attention import parse_tree, tree_logprobs

        vocab = 13
        for seed in range(12):
            rng = random.Random(seed)
            samples = branching_samples(rng, vocab)
            layout = layout_of(samples)
            wire = {"token_ids": layout.token_ids, "parents": layout.parents, "leaves": layout.leaves}
            layout = parse_tree(wire, samples)
            self.assertLessEqual(len(layout.token_ids), sum(len(s.token_ids) for s in samples))
            model = build_tiny(TinyConfig(vocab_size=vocab, hidden_size=16, num_layers=2, num_heads=2, max_positions=32), seed).double()
            width = max(len(s.token_ids) for s in samples)

            def pad(rows, value, dtype):
                return torch.tensor([r + [value] * (width - len(r)) for r in rows], dtype=dtype)

            mask = pad([s.loss_mask for s in samples], 0, torch.float64)
            old = pad([s.logprobs for s in samples], 0.0, torch.float64)
            adv = torch.tensor([s.advantage for s in samples], dtype=torch.float64)
            w = torch.tensor([s.weight for s in samples], dtype=torch.float64)
            total = float(mask.sum())

            def step(new):
                model.zero_grad(set_to_none=True)
                parts = ppo_clip_loss(new, old, mask, adv, w, 0.2)
                (parts.loss_sum / total).backward()
                return float(parts.loss_sum), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

            def flat_logprobs(ids):
                logits = model(torch.tensor([ids])).logits[0, :-1]
                picked = logits.gather(-1, torch.tensor(ids[1:]).unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
                return torch.nn.functional.pad(picked, (1, 0))

            flat_rows = [flat_logprobs(s.token_ids) for s in samples]
            flat_new = torch.stack([torch.nn.functional.pad(r, (0, width - len(r))) for r in flat_rows])
            flat_loss, flat_grads = step(flat_new)
            tree_new = tree_logprobs(model, layout)
            self.assertTrue(torch.allclose(tree_new * mask, flat_new.detach() * mask, atol=1e-10, rtol=0), f"seed {seed}")
            tree_loss, tree_grads = step(tree_new)
            self.assertAlmostEqual(tree_loss, flat_loss, places=10, msg=f"seed {seed}")
            self.assertEqual(set(tree_grads), set(flat_grads))
            for name, g in flat_grads.items():
                self.assertTrue(torch.allclose(tree_grads[name], g, atol=1e-10, rtol=1e-8), f"seed {seed}: {name}")

    def test_tries_hold_the_batch_within_the_node_budget_and_put_shared_prefixes_together(self):
        from agentjet_trainer.tree_attention import build_layout, pack_tries, tree_path

        for seed in range(12):
            samples = branching_samples(random.Random(seed), 13)
            self.assertEqual(build_layout(samples), layout_of(samples))
            budget = 12
            packs = pack_tries(samples, budget)
            self.assertEqual(sorted(id(s) for mb, _ in packs for s in mb), sorted(id(s) for s in samples))
            for mb, layout in packs:
                self.assertTrue(len(layout.token_ids) <= budget or len(mb) == 1, f"seed {seed}")
                for k, s in enumerate(mb):
                    self.assertEqual([layout.token_ids[n] for n in tree_path(layout, k)], s.token_ids)
        # Two branches of one prompt share a trie (and its prompt nodes) even when another sample comes between them.
        from agentjet_trainer.protocol import Sample

        def sample(ids):
            return Sample(ids, [0] + [1] * (len(ids) - 1), [0.0] + [-1.0] * (len(ids) - 1), 1.0, 1.0)

        packs = pack_tries([sample([1, 2, 3, 4]), sample([9, 9]), sample([1, 2, 3, 5])], 6)
        self.assertEqual([len(layout.token_ids) for _, layout in packs], [5, 2])

    def test_a_prefix_tree_step_is_the_flat_step(self):
        import torch

        from agentjet_trainer.protocol import TrainStep
        from tests.tiny import VOCAB, tiny_backend

        rng = random.Random(3)
        samples = [s for _ in range(3) for s in branching_samples(rng, VOCAB)]
        flat = tiny_backend(micro_batch_tokens=48, dtype=torch.float64)
        tree = tiny_backend(micro_batch_tokens=48, dtype=torch.float64, prefix_tree=True)
        for v in range(2):
            mf = flat.train_step(TrainStep(v, samples))
            mt = tree.train_step(TrainStep(v, samples))
            self.assertAlmostEqual(mt["loss"], mf["loss"], places=10)
            self.assertAlmostEqual(mt["grad_norm"], mf["grad_norm"], places=8)
            self.assertEqual(mt["tokens"], mf["tokens"])
        moved = max(float((a - b).abs().max()) for a, b in zip(flat.trainable, tiny_backend(dtype=torch.float64).trainable))
        self.assertGreater(moved, 1e-3)
        for a, b in zip(flat.trainable, tree.trainable):
            self.assertTrue(torch.allclose(a, b, atol=1e-9, rtol=0))

    def test_a_hugging_face_model_gets_the_additive_4d_mask(self):
        import torch

        from agentjet_trainer.tree_attention import TreeLayout, additive_mask, tree_inputs

        _, _, allowed = tree_inputs(TreeLayout([5, 6, 7], [-1, 0, 0], [1, 2]))
        mask = additive_mask(allowed, torch.bfloat16)
        self.assertEqual(tuple(mask.shape), (1, 1, 3, 3))
        self.assertEqual(mask.dtype, torch.bfloat16)
        self.assertEqual((mask[0, 0] == 0).tolist(), allowed[0].tolist())
        self.assertEqual(float(mask[0, 0, 1, 2]), torch.finfo(torch.bfloat16).min)

    def test_a_tree_that_does_not_reproduce_the_samples_is_refused(self):
        from agentjet_trainer.protocol import ProtocolError, Sample
        from agentjet_trainer.tree_attention import parse_tree

        samples = [Sample([1, 2, 3], [0, 1, 1], [0.0, -1.0, -1.0], 1.0, 1.0)]
        with self.assertRaises(ProtocolError) as e:
            parse_tree({"token_ids": [1, 2, 4], "parents": [-1, 0, 1], "leaves": [2]}, samples)
        self.assertEqual(e.exception.param, "tree.leaves.0")
        with self.assertRaises(ProtocolError) as e:
            parse_tree({"token_ids": [1, 2], "parents": [-1, 1], "leaves": [1]}, samples)
        self.assertEqual(e.exception.param, "tree.parents.1")


if __name__ == "__main__":
    unittest.main()
