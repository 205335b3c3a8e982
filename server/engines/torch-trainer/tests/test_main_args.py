import unittest

from agentjet_trainer.__main__ import parse_args, refusal


class MainArgsTest(unittest.TestCase):
    """Flags that cannot start on this machine are refused with the fix, before torch, peft or CUDA fail deep inside."""

    def test_the_tiny_model_needs_full_mode(self):
        args = parse_args(["--model", "agentjet-tiny", "--device", "cpu"])
        self.assertRegex(refusal(args, cuda_available=False), r"agentjet-tiny trains full weights only: add --mode full")
        self.assertIsNone(refusal(parse_args(["--model", "agentjet-tiny", "--mode", "full", "--device", "cpu"]), cuda_available=False))

    def test_cuda_without_a_gpu_says_to_pass_device_cpu(self):
        args = parse_args(["--model", "agentjet-tiny", "--mode", "full"])
        self.assertRegex(refusal(args, cuda_available=False), r"--device cuda \(the default is cuda\) but this torch sees no CUDA GPU: pass --device cpu")
        self.assertIsNone(refusal(args, cuda_available=True))
        self.assertRegex(refusal(parse_args(["--model", "m", "--device", "cuda:1"]), cuda_available=False), r"--device cuda:1")


if __name__ == "__main__":
    unittest.main()
