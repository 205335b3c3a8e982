"""A Python client-driven run trains: 8 tasks x a group of 4 per step, several steps; the weights move on."""

from __future__ import annotations

import json
import sys
import unittest
from pathlib import Path
from typing import Any, Dict, List, Set

from _server import ADMIN_TOKEN, CLIENT_TOKEN, Server, tiny_config

from agentjet import SwarmClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import math_agent  # noqa: E402

TASKS = 8
GROUP = 4
STEPS = 3


def training_config() -> Dict[str, Any]:
    return tiny_config(
        run={"steps": STEPS, "checkpointEvery": 100},
        clients={"local": 0},
        batching={"strategy": "tasks", "batchTasks": TASKS, "groupSize": GROUP},
        sampling={"temperature": 1, "maxTokens": 4},
    )


class TrainingTests(unittest.TestCase):
    def test_a_python_client_driven_run_trains(self) -> None:
        server = Server(training_config(), command="train", extra_args=["--json", "--no-report"]).start()
        try:
            client = SwarmClient(server.url, CLIENT_TOKEN, heartbeat_interval_s=2.0)
            reader = SwarmClient(server.url, ADMIN_TOKEN)
            tasks = math_agent.make_tasks(TASKS)
            versions_by_round: List[Set[int]] = []
            for round_ in range(STEPS):
                results = math_agent.run_round(client, tasks, GROUP, concurrency=8)
                self.assertEqual(len(results), TASKS * GROUP)
                self.assertTrue(all("reward" in r for r in results), results)
                if round_ < STEPS - 1:  # the server exits after the last step
                    versions_by_round.append(self._check_calls(reader, results))
                server.wait_for_lines('{"type":"step"', round_ + 1, timeout_s=180)
            steps = [json.loads(line) for line in server.wait_for_lines('{"type":"step"', STEPS, timeout_s=180)]
            self.assertEqual([s["step"] for s in steps], list(range(1, STEPS + 1)))
            self.assertEqual([s["version"] for s in steps], list(range(1, STEPS + 1)))  # the weights moved on each step
            self.assertEqual(versions_by_round, [{0}, {1}])  # round k was served by the weights of step k
        finally:
            server.close()

    def _check_calls(self, reader: SwarmClient, results: List[Dict[str, Any]]) -> Set[int]:
        """Every recorded call carries token ids and log-probs; returns the weight versions that served them."""
        versions: Set[int] = set()
        for r in results:
            calls = reader.episode_calls(r["episode"])
            self.assertEqual(len(calls), 1)
            call = calls[0]
            self.assertGreater(sum(len(s["ids"]) for s in call["segments"]), 0)
            self.assertGreater(len(call["outputIds"]), 0)
            self.assertEqual(len(call["outputIds"]), len(call["outputLogprobs"]))
            self.assertTrue(all(lp <= 0 for lp in call["outputLogprobs"]))
            versions.add(call["version"])
        return versions


if __name__ == "__main__":
    unittest.main()
