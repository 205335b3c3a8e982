import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.torch_available import skip_reason

REASON = skip_reason("the two-process gloo data-parallel test (tests/test_data_parallel.py)", "torch")
HERE = os.path.dirname(os.path.abspath(__file__))
#: torch 1.13's torchrun cannot parse its own default `--redirects 0` under Python 3.11 (enum.Flag no
#: longer iterates the zero member); redirecting stdout to its log and teeing it back works everywhere.
DEBIAN_PY311_REDIRECTS = ["--redirects", "1", "--tee", "1"]


def torchrun() -> list[str]:
    """torchrun of this interpreter (Debian installs it as /usr/bin/torchrun; pip next to python)."""
    beside = os.path.join(os.path.dirname(sys.executable), "torchrun")
    return [beside] if os.path.exists(beside) else [shutil.which("torchrun") or "torchrun"]


@unittest.skipIf(REASON is not None, REASON or "")
class DataParallelTest(unittest.TestCase):
    def test_two_gloo_processes_make_the_one_process_update(self):
        with tempfile.TemporaryDirectory() as tmp:
            # read from a file: torchrun's tee can put the other rank's output on the DP-CHECK line
            report = os.path.join(tmp, "dp-check.json")
            r = subprocess.run(
                [*torchrun(), "--standalone", "--nnodes", "1", "--nproc_per_node", "2", *DEBIAN_PY311_REDIRECTS, os.path.join(HERE, "data_parallel_check.py")],
                cwd=os.path.dirname(HERE),
                env={**os.environ, "PYTHONPATH": os.path.dirname(HERE), "OMP_NUM_THREADS": "1", "DP_CHECK_OUT": report},
                capture_output=True,
                text=True,
                timeout=300,
            )
            out = r.stdout + r.stderr
            self.assertEqual(r.returncode, 0, out)
            self.assertTrue(os.path.exists(report), out)
            with open(report, encoding="utf-8") as f:
                got = json.load(f)
        self.assertGreaterEqual(got["micro_batches"], 4)  # both ranks get work
        self.assertEqual(got["world"], 2)
        self.assertEqual(got["versions"], [2, 2])
        self.assertEqual(got["tokens"][0], got["tokens"][1])
        self.assertGreater(got["moved"], 1e-3)
        self.assertLess(got["max_diff_to_single"], 1e-10)
        self.assertEqual(got["max_spread_between_ranks"], 0.0)
        for a, b in zip(*got["loss"]):
            self.assertAlmostEqual(a, b, places=5)
        for a, b in zip(*got["grad_norm"]):
            self.assertAlmostEqual(a, b, places=4)


class _FakeShardedGroup:
    """Rank `rank` of a two-rank FSDP group, without torch.distributed: what the backend asks of it."""

    def __init__(self, rank):
        from agentjet_trainer.data_parallel import DataParallel

        self.rank, self.world, self.sharded = rank, 2, True
        self._assign = lambda items, size: DataParallel._assign(self, items, size)
        self.shard = lambda items, size: DataParallel.shard(self, items, size)
        self.most_per_rank = lambda items, size: DataParallel.most_per_rank(self, items, size)

    def wrap_fsdp(self, model):
        return model


@unittest.skipIf(REASON is not None, REASON or "")
class FsdpTest(unittest.TestCase):
    def test_fsdp_is_refused_on_cpu_and_on_old_torch_with_the_reason(self):
        from agentjet_trainer.data_parallel import FsdpUnavailable, check_fsdp

        with self.assertRaises(FsdpUnavailable) as e:
            check_fsdp("cpu")
        self.assertIn("CUDA GPUs only", str(e.exception))
        self.assertIn("torch 1.13", str(e.exception))
        self.assertEqual(e.exception.code, "AJ_ERR_FSDP_UNAVAILABLE")
        with self.assertRaises(FsdpUnavailable):
            check_fsdp("cuda", "1.13.0a0")
        check_fsdp("cuda:1", "2.4.1+cu121")

    def test_the_cli_names_the_reason_on_cpu(self):
        r = subprocess.run(
            [sys.executable, "-m", "agentjet_trainer", "--model", "agentjet-tiny", "--device", "cpu", "--mode", "full", "--shard", "fsdp"],
            cwd=os.path.dirname(HERE),
            capture_output=True,
            text=True,
            timeout=120,
        )
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--shard fsdp runs on CUDA GPUs only", r.stderr)

    def test_every_fsdp_rank_makes_the_same_passes_a_short_one_with_weight_zero(self):
        from tests.tiny import batch, step_of, tiny_backend

        samples = step_of(batch(3, seed=2)).samples
        for rank in (0, 1):
            backend = tiny_backend(parallel=_FakeShardedGroup(rank), micro_batch_tokens=4096)
            passes = backend._micro_batches(samples)
            # One micro-batch in all: rank 0 trains it, rank 1 repeats it with factor 0 so both gather the shards once.
            self.assertEqual(len(passes), 1)
            self.assertEqual(passes[0][2], 1.0 if rank == 0 else 0.0)
            self.assertEqual(len(passes[0][0]), 3)


if __name__ == "__main__":
    unittest.main()
