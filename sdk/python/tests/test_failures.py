"""What a Python agent sees when things go wrong: a bad token, a server restart mid-episode, an unreachable server."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path
from typing import List, Optional

from _chat import chat
from _server import ADMIN_TOKEN, CLIENT_TOKEN, Server, ServerTestCase, tiny_config

from agentjet import APIConnectionError, AuthenticationError, EpisodeLostError, Retry, SwarmClient
from agentjet.cli import EXIT_AUTH, EXIT_UNREACHABLE

SRC = str(Path(__file__).resolve().parents[1] / "src")


def run_cli(args: List[str], token: Optional[str] = None) -> "subprocess.CompletedProcess[str]":
    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("AGENTJET_CLIENT_TOKEN", None)
    env.pop("AGENTJET_ADMIN_TOKEN", None)
    if token is not None:
        env["AGENTJET_CLIENT_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "agentjet", *args], env=env, capture_output=True, text=True, timeout=120)


class BadTokenTests(ServerTestCase):
    def test_a_bad_token_is_a_clear_exception(self) -> None:
        with self.assertRaises(AuthenticationError) as caught:
            SwarmClient(self.server.url, "not-a-token").begin_episode("t", env="pysdk")
        err = caught.exception
        self.assertEqual(err.status, 401)
        self.assertTrue(err.code.startswith("AJ_ERR_"), err.code)

    def test_a_bad_token_is_an_exit_code(self) -> None:
        result = run_cli(["--url", self.server.url, "status"], token="not-a-token")
        self.assertEqual(result.returncode, EXIT_AUTH, result.stderr)
        self.assertIn("AJ_ERR_", result.stderr)
        self.assertIn("token", result.stderr)


class UnreachableTests(unittest.TestCase):
    def test_connection_errors_are_retried_then_raised(self) -> None:
        client = SwarmClient("http://127.0.0.1:9", CLIENT_TOKEN, retry=Retry(total_s=1.0, initial_s=0.1))
        started = time.monotonic()
        with self.assertRaises(APIConnectionError) as caught:
            client.begin_episode("t", env="pysdk")
        self.assertGreaterEqual(time.monotonic() - started, 0.5)  # it waited and retried
        self.assertEqual(caught.exception.code, "AJ_ERR_CONNECTION")
        self.assertIn("attempt", caught.exception.message)

    def test_the_cli_says_unreachable(self) -> None:
        result = run_cli(["--url", "http://127.0.0.1:9", "--retry-s", "0.5", "status"], token=CLIENT_TOKEN)
        self.assertEqual(result.returncode, EXIT_UNREACHABLE, result.stderr)
        self.assertIn("AJ_ERR_CONNECTION", result.stderr)


class RestartTests(unittest.TestCase):
    def test_a_server_restart_mid_episode_reports_the_episode_lost(self) -> None:
        server = Server(tiny_config()).start()
        try:
            client = SwarmClient(server.url, CLIENT_TOKEN, heartbeat_interval_s=0.3, retry=Retry(total_s=120.0, max_s=1.0))
            episode = client.begin_episode("restart", env="pysdk")
            chat(episode.base_url, episode.api_key, [{"role": "user", "content": "2+2="}])
            server.stop()
            time.sleep(1.0)  # the heart-beat meets a closed port
            self.assertIsNotNone(episode.last_heartbeat_error)

            outcome: List[BaseException] = []

            def end() -> None:
                try:
                    episode.end(1.0)
                except BaseException as err:  # noqa: BLE001 - the test inspects it
                    outcome.append(err)

            ender = threading.Thread(target=end)
            ender.start()  # end() retries with backoff while the server is down
            time.sleep(0.5)
            server.start()
            ender.join(timeout=120)
            self.assertFalse(ender.is_alive())
            self.assertEqual(len(outcome), 1)
            lost = outcome[0]
            self.assertIsInstance(lost, EpisodeLostError)
            assert isinstance(lost, EpisodeLostError)
            self.assertIn(lost.code, ("AJ_ERR_EPISODE_STATE", "AJ_ERR_EPISODE_NOT_FOUND"))
            self.assertEqual(episode.state, "lost")
            view = SwarmClient(server.url, ADMIN_TOKEN).episode_info(episode.id)
            self.assertEqual(view["state"], "aborted")
            self.assertEqual(view["abortReason"]["kind"], "server-restart")
            self.assertIsNone(view["rewards"])  # nothing half-recorded was scored
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main()
