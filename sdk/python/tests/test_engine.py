"""The admin token's calls: configure and start an empty ``agentjet serve``, read its status, stop it; agree_sync."""

from __future__ import annotations

import unittest

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


if __name__ == "__main__":
    unittest.main()
