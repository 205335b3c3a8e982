import json
import os
import shutil
import subprocess
import sys
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
        r = subprocess.run(
            [*torchrun(), "--standalone", "--nnodes", "1", "--nproc_per_node", "2", *DEBIAN_PY311_REDIRECTS, os.path.join(HERE, "data_parallel_check.py")],
            cwd=os.path.dirname(HERE),
            env={**os.environ, "PYTHONPATH": os.path.dirname(HERE), "OMP_NUM_THREADS": "1"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        line = next(l for l in r.stdout.splitlines() if "DP-CHECK " in l)
        got = json.loads(line.split("DP-CHECK ", 1)[1])
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


if __name__ == "__main__":
    unittest.main()
