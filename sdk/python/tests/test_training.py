"""
A Python client-driven run trains: an empty ``agentjet serve`` is configured and started by the admin
token, then 8 tasks x a group of 4 per step, 3 steps; the weights move on each step.
"""

from __future__ import annotations

import time
import unittest
from typing import Any, Dict, List, Set

from _server import ADMIN_TOKEN, CLIENT_TOKEN, Server, tiny_config

from agentjet import SwarmClient
from examples_path import math_agent

TASKS = 8
GROUP = 4
STEPS = 3


class TrainingTests(unittest.TestCase):
    def test_a_python_client_driven_run_trains(self) -> None:
        server = Server(None).start()
        try:
            admin = SwarmClient(server.url, ADMIN_TOKEN)
            admin.configure(
                tiny_config(
                    run={"dir": str(server.dir / "run"), "steps": 1000, "checkpointEvery": 1000},
                    batching={"strategy": "tasks", "batchTasks": TASKS, "groupSize": GROUP},
                    sampling={"temperature": 1, "maxTokens": 4},
                )
            )
            admin.start_engine()
            self.assertEqual(admin.wait_for_engine("rolling", timeout_s=120)["versions"], {"main": 0})

            client = SwarmClient(server.url, CLIENT_TOKEN, heartbeat_interval_s=2.0)
            tasks = math_agent.make_tasks(TASKS)
            served: List[Set[int]] = []
            for step in range(1, STEPS + 1):
                results = math_agent.run_round(client, tasks, GROUP, concurrency=8)
                self.assertEqual(len(results), TASKS * GROUP)
                self.assertTrue(all("reward" in r for r in results), results)
                served.append(self._check_calls(admin, results))
                status = self._wait_for_step(admin, step)
                self.assertEqual(status["versions"], {"main": step})  # the weights moved on
            self.assertEqual(served, [{0}, {1}, {2}])  # round k was served by the weights of step k
            admin.stop_engine()
            self.assertEqual(admin.wait_for_engine("offline", timeout_s=120)["state"], "offline")
        finally:
            server.close()

    def _wait_for_step(self, admin: SwarmClient, step: int) -> Dict[str, Any]:
        deadline = time.monotonic() + 180
        while True:
            status: Dict[str, Any] = dict(admin.engine_status())
            if status.get("step", 0) >= step and status.get("state") == "rolling":
                return status
            if time.monotonic() > deadline:
                self.fail(f"no step {step} in 180 s: {status}")
            time.sleep(0.2)

    def _check_calls(self, admin: SwarmClient, results: List[Dict[str, Any]]) -> Set[int]:
        """Every recorded call carries token ids and log-probs; returns the weight versions that served them."""
        versions: Set[int] = set()
        for r in results:
            calls = admin.episode_calls(r["episode"])
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
