import unittest

from agentjet_trainer.protocol import ProtocolError, parse_publish, parse_train_step

SAMPLE = {"token_ids": [1, 2, 3, 4], "loss_mask": [0, 0, 1, 1], "logprobs": [0, 0, -0.5, -1], "advantage": 1, "weight": 1}


class ProtocolTest(unittest.TestCase):
    def assert_invalid(self, body, param):
        with self.assertRaises(ProtocolError) as cm:
            parse_train_step(body)
        self.assertEqual(cm.exception.status, 400)
        self.assertEqual(cm.exception.code, "invalid_request")
        self.assertEqual(cm.exception.param, param)

    def test_accepts_a_valid_step(self):
        step = parse_train_step({"expected_version": 3, "samples": [SAMPLE]})
        self.assertEqual(step.expected_version, 3)
        self.assertEqual(step.samples[0].loss_mask, [0, 0, 1, 1])

    def test_checks_every_field(self):
        cases = [
            ({**SAMPLE, "loss_mask": [0, 1, 1]}, "samples.0.loss_mask"),
            ({**SAMPLE, "logprobs": [0, 0, -1]}, "samples.0.logprobs"),
            ({**SAMPLE, "loss_mask": [1, 0, 1, 1]}, "samples.0.loss_mask.0"),
            ({**SAMPLE, "loss_mask": [0, 0, 0, 0]}, "samples.0.loss_mask"),
            ({**SAMPLE, "loss_mask": [0, 0, 2, 1]}, "samples.0.loss_mask"),
            ({**SAMPLE, "token_ids": [1, 2, -3, 4]}, "samples.0.token_ids"),
            ({**SAMPLE, "token_ids": [1, 2, 3.5, 4]}, "samples.0.token_ids"),
            ({**SAMPLE, "token_ids": [1, 2, True, 4]}, "samples.0.token_ids"),
            ({**SAMPLE, "weight": -1}, "samples.0.weight"),
            ({**SAMPLE, "advantage": float("nan")}, "samples.0.advantage"),
            ({k: v for k, v in SAMPLE.items() if k != "weight"}, "samples.0.weight"),
        ]
        for sample, param in cases:
            with self.subTest(param=param, sample=sample):
                self.assert_invalid({"expected_version": 0, "samples": [SAMPLE, sample][1:]}, param)
        self.assert_invalid({"expected_version": -1, "samples": [SAMPLE]}, "expected_version")
        self.assert_invalid({"expected_version": 0, "samples": []}, "samples")

    def test_publish(self):
        self.assertEqual(parse_publish({"version": 2}).load_into, [])
        with self.assertRaises(ProtocolError):
            parse_publish({"version": 2, "adapter_name": "a/b"})
        with self.assertRaises(ProtocolError):
            parse_publish({"version": 2, "load_into": ["ftp://x"]})


if __name__ == "__main__":
    unittest.main()
