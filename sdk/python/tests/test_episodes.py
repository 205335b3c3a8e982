"""Client-driven episodes against a real ``agentjet serve``: begin, chat, end / abort, the context manager, heart-beats."""

from __future__ import annotations

import gc
import time
import unittest
import warnings

from _chat import chat
from _server import ADMIN_TOKEN, CLIENT_TOKEN, ServerTestCase, tiny_config

import agentjet
from agentjet import BadRequestError, ConflictError, EpisodeClosedError, EpisodeLostError, SwarmClient

IDLE_TIMEOUT_S = 3


class EpisodeTests(ServerTestCase):
    config = tiny_config(server={"idleTimeoutS": IDLE_TIMEOUT_S})
    client: SwarmClient
    admin: SwarmClient
    """Reads the server's view of episodes (GET /v1/episodes/... is an admin route)."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.client = SwarmClient(cls.server.url, CLIENT_TOKEN, heartbeat_interval_s=0.5)
        cls.admin = SwarmClient(cls.server.url, ADMIN_TOKEN)

    def test_begin_chat_end(self) -> None:
        episode = self.client.begin_episode("task-1", env="pysdk", metadata={"source": "test"})
        self.assertEqual(episode.state, "running")
        self.assertEqual(episode.task_id, "task-1")
        self.assertEqual(list(episode.api_keys), ["main"])
        self.assertTrue(episode.api_key.startswith("sk-aj-"))
        self.assertEqual(episode.base_url, f"{self.server.url}/v1")
        answer = chat(episode.base_url, episode.api_key, [{"role": "user", "content": "3+4="}])
        self.assertEqual(answer["choices"][0]["message"]["role"], "assistant")
        ended = episode.end({"main": 1.0}, metadata={"answer": answer["choices"][0]["message"]["content"]})
        self.assertEqual(episode.state, "ended")
        self.assertEqual(ended["state"], "ended")
        server_view = self.admin.episode_info(episode.id)
        self.assertEqual(server_view["state"], "ended")
        self.assertEqual(server_view["rewards"], {"main": 1.0})
        calls = self.admin.episode_calls(episode.id)
        self.assertEqual(len(calls), 1)
        self.assertGreater(len(calls[0]["outputIds"]), 0)
        self.assertEqual(len(calls[0]["outputIds"]), len(calls[0]["outputLogprobs"]))

    def test_one_number_is_the_only_agents_reward(self) -> None:
        episode = self.client.begin_episode("task-2", env="pysdk")
        episode.end(0.5)
        self.assertEqual(self.admin.episode_info(episode.id)["rewards"], {"main": 0.5})

    def test_several_agents_get_one_key_each(self) -> None:
        episode = self.client.begin_episode("task-3", env="pysdk", agents=["alice", "bob"])
        self.assertEqual(sorted(episode.api_keys), ["alice", "bob"])
        self.assertNotEqual(episode.key("alice"), episode.key("bob"))
        for agent in ("alice", "bob"):
            chat(episode.base_url, episode.key(agent), [{"role": "user", "content": f"hi {agent}"}])
        with self.assertRaises(AttributeError):
            episode.api_key
        with self.assertRaises(ValueError):
            episode.end(1.0)
        episode.end({"alice": 1.0, "bob": 0.0})
        self.assertEqual({c["agentId"] for c in self.admin.episode_calls(episode.id)}, {"alice", "bob"})

    def test_abort_is_never_a_score(self) -> None:
        episode = self.client.begin_episode("task-4", env="pysdk")
        episode.abort("the sandbox crashed", kind="crash")
        self.assertEqual(episode.state, "aborted")
        view = self.admin.episode_info(episode.id)
        self.assertEqual(view["state"], "aborted")
        self.assertIsNone(view["rewards"])
        self.assertEqual(view["abortReason"], {"kind": "crash", "message": "the sandbox crashed"})
        episode.abort("again")  # closed: nothing to do
        with self.assertRaises(EpisodeClosedError) as caught:
            episode.end(1.0)
        self.assertEqual(caught.exception.code, "AJ_ERR_EPISODE_STATE")

    def test_context_manager_aborts_on_exception(self) -> None:
        with self.assertRaises(ZeroDivisionError):
            with self.client.begin_episode("task-5", env="pysdk") as episode:
                chat(episode.base_url, episode.api_key, [{"role": "user", "content": "1+1="}])
                1 / 0
        self.assertEqual(episode.state, "aborted")
        view = self.admin.episode_info(episode.id)
        self.assertEqual(view["state"], "aborted")
        self.assertIsNone(view["rewards"])
        self.assertEqual(view["abortReason"]["kind"], "workflow")
        self.assertIn("ZeroDivisionError", view["abortReason"]["message"])

    def test_context_manager_ends_normally(self) -> None:
        with self.client.begin_episode("task-6", env="pysdk") as episode:
            episode.end(1.0)
        self.assertEqual(self.admin.episode_info(episode.id)["state"], "ended")

    def test_context_manager_aborts_a_block_that_forgot_to_end(self) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with self.client.begin_episode("task-7", env="pysdk") as episode:
                pass
        self.assertTrue(any(issubclass(w.category, RuntimeWarning) for w in caught))
        self.assertEqual(self.admin.episode_info(episode.id)["state"], "aborted")

    def test_rewards_must_be_finite_numbers(self) -> None:
        episode = self.client.begin_episode("task-8", env="pysdk")
        for bad in (float("nan"), float("inf"), True, "1"):
            with self.assertRaises(ValueError):
                episode.end({"main": bad})  # type: ignore[dict-item]
        with self.assertRaises(ValueError):
            episode.end({"nobody": 1.0})
        self.assertEqual(episode.state, "running")
        episode.end(0.0)

    def test_metadata_that_is_not_json_is_refused_before_anything_is_sent(self) -> None:
        with self.assertRaises(ValueError):
            self.client.begin_episode("task-11", env="pysdk", metadata={"score": float("nan")})
        episode = self.client.begin_episode("task-11", env="pysdk")
        with self.assertRaises(ValueError) as caught:
            episode.end(1.0, metadata={"score": float("inf")})  # the server could not parse it
        self.assertIn("NaN", str(caught.exception))
        self.assertEqual(episode.state, "running")
        self.assertEqual(episode.end(1.0, metadata={"score": None})["state"], "ended")

    def test_every_policy_agent_needs_a_reward_before_anything_is_sent(self) -> None:
        episode = self.client.begin_episode("task-10", env="pysdk", agents=["alice", "bob"])
        with self.assertRaises(ValueError) as caught:
            episode.end({"alice": 1.0})  # the server would abort the whole episode for the missing 'bob'
        self.assertIn("'bob'", str(caught.exception))
        self.assertEqual(episode.state, "running")
        self.assertEqual(self.admin.episode_info(episode.id)["state"], "claimed")
        self.assertEqual(episode.end({"alice": 1.0, "bob": 0.0})["state"], "ended")

    def test_rewards_the_server_refuses_leave_the_episode_aborted(self) -> None:
        episode = self.client.begin_episode("add-3-4", env="arith")  # arith declares rewards in [0, 1]
        with self.assertRaises(BadRequestError) as caught:
            episode.end(5.0)
        self.assertEqual(caught.exception.code, "AJ_ERR_EPISODE_REWARDS")
        self.assertEqual(episode.state, "aborted")
        self.assertEqual(self.admin.episode_info(episode.id)["state"], "aborted")
        with self.assertRaises(EpisodeClosedError):
            episode.end(1.0)

    def test_a_dropped_episode_stops_heart_beating_and_is_aborted(self) -> None:
        def forget() -> str:
            return self.client.begin_episode("forgotten", env="pysdk").id  # neither ended nor aborted

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            episode_id = forget()
            gc.collect()
        deadline = time.monotonic() + 10
        while self.admin.episode_info(episode_id)["state"] == "claimed" and time.monotonic() < deadline:
            time.sleep(0.1)
        view = self.admin.episode_info(episode_id)
        self.assertEqual(view["state"], "aborted")  # not heart-beaten until the process exits
        self.assertEqual(view["abortReason"]["kind"], "workflow")

    def test_a_lost_episode_names_the_servers_state_with_a_client_token(self) -> None:
        quiet = SwarmClient(self.server.url, CLIENT_TOKEN, heartbeat_interval_s=None)
        episode = quiet.begin_episode("lost-state", env="pysdk")
        self.admin_abort(episode.id)
        with self.assertRaises(EpisodeLostError) as caught:
            episode.end(1.0)
        self.assertEqual(caught.exception.state, "aborted")  # GET /v1/episodes/:id is not the client token's
        self.assertIn("state aborted", caught.exception.message)
        refusal = caught.exception.__cause__
        assert isinstance(refusal, ConflictError)
        self.assertEqual((refusal.code, refusal.body["error"]["state"]), ("AJ_ERR_EPISODE_STATE", "aborted"))  # a field, not only words

    def admin_abort(self, episode_id: str) -> None:
        from agentjet._transport import Transport

        Transport(self.server.url, ADMIN_TOKEN, timeout_s=10, retry=agentjet.Retry()).request(
            "POST", f"/v1/episodes/{episode_id}/abort", {"reason": {"kind": "cancelled", "message": "by the test"}}
        )

    def test_heartbeats_keep_a_slow_episode_alive_past_the_idle_timeout(self) -> None:
        episode = self.client.begin_episode("slow", env="pysdk")
        time.sleep(IDLE_TIMEOUT_S * 2)  # a slow tool: no chat call for twice the idle timeout
        self.assertIsNone(episode.last_heartbeat_error)
        chat(episode.base_url, episode.api_key, [{"role": "user", "content": "still here"}])
        episode.end(1.0)
        self.assertEqual(self.admin.episode_info(episode.id)["state"], "ended")

    def test_without_heartbeats_the_idle_episode_is_lost(self) -> None:
        quiet = SwarmClient(self.server.url, CLIENT_TOKEN, heartbeat_interval_s=None)
        episode = quiet.begin_episode("silent", env="pysdk")
        time.sleep(IDLE_TIMEOUT_S * 2)
        with self.assertRaises(EpisodeLostError) as caught:
            episode.end(1.0)
        self.assertEqual(episode.state, "lost")
        self.assertIn(caught.exception.code, ("AJ_ERR_EPISODE_STATE", "AJ_ERR_EPISODE_NOT_FOUND"))
        self.assertIsNone(self.admin.episode_info(episode.id)["rewards"])
        episode.abort("gave up")  # lost: nothing to do

    def test_explicit_heartbeat(self) -> None:
        episode = self.client.begin_episode("task-9", env="pysdk")
        self.assertEqual(episode.heartbeat()["state"], "claimed")
        episode.end(1.0)

    def test_package_is_typed(self) -> None:
        from pathlib import Path

        self.assertTrue((Path(agentjet.__file__).parent / "py.typed").exists())


if __name__ == "__main__":
    unittest.main()
