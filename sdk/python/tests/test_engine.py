"""The admin token's calls: configure and start an empty ``agentjet serve``, read its status, stop it; agree_sync."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path

from _chat import chat
from _server import ADMIN_TOKEN, CLIENT_TOKEN, ServerTestCase, tiny_config

from agentjet import BadRequestError, PermissionDeniedError, SwarmClient


class EngineTests(ServerTestCase):
    config = None  # the engine is offline
    admin: SwarmClient
    client: SwarmClient

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.admin = SwarmClient(cls.server.url, ADMIN_TOKEN)
        cls.client = SwarmClient(cls.server.url, CLIENT_TOKEN)

    def test_configure_start_status_stop(self) -> None:
        self.assertEqual(self.client.engine_status()["state"], "offline")
        with self.assertRaises(PermissionDeniedError) as denied:
            self.client.configure(tiny_config())
        self.assertEqual(denied.exception.status, 403)
        with self.assertRaises(BadRequestError) as invalid:
            self.admin.configure({"policies": "none"})
        self.assertEqual(invalid.exception.code, "AJ_ERR_INVALID_CONFIG")

        self.admin.configure(tiny_config(run={"dir": str(self.server.dir / "configured")}))
        self.admin.start_engine()
        status = self.admin.wait_for_engine("rolling", timeout_s=120)
        self.assertEqual(status["versions"], {"main": 0})
        self.assertEqual(status["step"], 0)

        with self.client.begin_episode("after-start") as episode:
            chat(episode.base_url, episode.api_key, [{"role": "user", "content": "1+2="}])
            episode.end(1.0)
        self.assertIn("agreed", self.client.agree_sync())

        self.admin.stop_engine()
        self.assertEqual(self.admin.wait_for_engine("offline", timeout_s=120)["state"], "offline")

    def test_the_cli_uses_the_admin_token_for_admin_commands_when_both_are_set(self) -> None:
        src = str(Path(__file__).resolve().parents[1] / "src")
        env = {**os.environ, "PYTHONPATH": src, "AGENTJET_URL": self.server.url, "AGENTJET_CLIENT_TOKEN": CLIENT_TOKEN, "AGENTJET_ADMIN_TOKEN": ADMIN_TOKEN}
        stop = subprocess.run([sys.executable, "-m", "agentjet", "stop"], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(stop.returncode, 0, stop.stderr)  # the admin's shell holds both tokens: stop takes the admin one
        forced = subprocess.run([sys.executable, "-m", "agentjet", "--token", CLIENT_TOKEN, "stop"], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(forced.returncode, 4, forced.stderr)  # --token wins


if __name__ == "__main__":
    unittest.main()
