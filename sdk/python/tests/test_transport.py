"""The transport without a server: backoff timing (a fake clock), error bodies to classes."""

from __future__ import annotations

import unittest
from typing import List

from typing import Any, Mapping, Optional

from agentjet import APIConnectionError, AuthenticationError, ConflictError, Episode, EpisodeLostError, InternalServerError, NotFoundError, PermissionDeniedError, Retry, SwarmClient
from agentjet._transport import Transport
from agentjet.errors import APIStatusError, BadRequestError, status_error


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.waits: List[float] = []

    def sleep(self, s: float) -> None:
        self.waits.append(s)
        self.now += s

    def clock(self) -> float:
        return self.now


class BackoffTests(unittest.TestCase):
    def test_connection_errors_back_off_doubling_up_to_the_cap_then_raise(self) -> None:
        t = FakeTime()
        transport = Transport("http://127.0.0.1:9", None, timeout_s=1, retry=Retry(total_s=10, initial_s=0.5, max_s=2), sleep=t.sleep, clock=t.clock)
        with self.assertRaises(APIConnectionError) as caught:
            transport.request("GET", "/v1/engine/status")
        nominal = [0.5, 1, 2, 2]  # doubling, capped at max_s, each +-20%; then more of 2 until 10 s are spent
        self.assertGreaterEqual(len(t.waits), len(nominal), t.waits)
        for i, wait in enumerate(t.waits):
            expected = nominal[min(i, len(nominal) - 1)]
            self.assertGreaterEqual(wait, expected * 0.8, t.waits)
            self.assertLessEqual(wait, expected * 1.2, t.waits)
        self.assertLessEqual(t.now, 10)
        self.assertEqual(caught.exception.code, "AJ_ERR_CONNECTION")
        self.assertIn(f"after {len(t.waits) + 1} attempt(s)", caught.exception.message)

    def test_no_retry_budget_fails_at_once(self) -> None:
        t = FakeTime()
        transport = Transport("http://127.0.0.1:9", None, timeout_s=1, retry=Retry(total_s=0), sleep=t.sleep, clock=t.clock)
        with self.assertRaises(APIConnectionError):
            transport.request("POST", "/v1/episodes/begin", {"taskId": "t"}, idempotent=False)
        self.assertEqual(t.waits, [])


class StatusErrorTests(unittest.TestCase):
    def test_statuses_map_to_classes_with_the_server_code(self) -> None:
        cases = [(400, BadRequestError), (401, AuthenticationError), (403, PermissionDeniedError), (404, NotFoundError), (409, ConflictError), (413, BadRequestError), (503, InternalServerError), (418, APIStatusError)]
        for status, cls in cases:
            body = {"error": {"message": "m", "type": "t", "code": f"AJ_ERR_X{status}", "param": "p"}}
            err = status_error(status, body, method="POST", url="http://s/v1/x")
            self.assertIs(type(err), cls)
            self.assertEqual((err.status, err.code, err.type, err.param), (status, f"AJ_ERR_X{status}", "t", "p"))
            self.assertIn("POST http://s/v1/x: m", err.message)

    def test_a_body_that_is_not_an_error_object_still_gives_a_code(self) -> None:
        err = status_error(502, "<html>bad gateway</html>", method="GET", url="http://s/")
        self.assertIsInstance(err, InternalServerError)
        self.assertEqual(err.code, "HTTP_502")


class RetriedEndTransport(Transport):
    """
    A server that applied the first ``end`` but whose answer was lost: the retry meets 409, and a client
    token may not GET the episode. The refusal carries ``state`` as this server does, or (``state=None``)
    names it only in ``message``, as a server older than that field does.
    """

    def __init__(self, state: Optional[str] = "ended", message: str = "episode 'ep-1' is ended; cannot {action}") -> None:
        super().__init__("http://127.0.0.1:9", "client-token", timeout_s=1, retry=Retry(total_s=0))
        self.state = state
        self.message = message
        self.sent: List[str] = []

    def request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, *, idempotent: bool = True, retry: Optional[Retry] = None) -> Any:
        self.sent.append(f"{method} {path}")
        url = self.url + path
        if method == "GET":
            raise status_error(403, {"error": {"message": f"GET {path} needs the admin token", "code": "AJ_ERR_AUTH_FORBIDDEN"}}, method=method, url=url)
        action = path.rsplit("/", 1)[1]
        error = {"message": self.message.format(action=action), "type": "conflict_error", "code": "AJ_ERR_EPISODE_STATE", "param": None}
        if self.state is not None:
            error["state"] = self.state
        raise status_error(409, {"error": error}, method=method, url=url)


class ClientTokenTests(unittest.TestCase):
    def episode(self, transport: Transport) -> Episode:
        agents = {"main": {"kind": "policy", "target": "main"}}
        return Episode(transport, {"episodeId": "ep-1", "taskId": "t", "env": "e", "agents": agents}, "http://127.0.0.1:9/v1", {"main": "sk-aj-x"}, heartbeat_interval_s=None)

    def test_a_retried_end_the_server_already_applied_is_a_success_with_a_client_token(self) -> None:
        episode = self.episode(RetriedEndTransport())
        ended = episode.end(0.7)
        self.assertEqual(episode.state, "ended")
        self.assertEqual(ended["state"], "ended")
        self.assertEqual(ended["rewards"], {"main": 0.7})

    def test_a_lost_episode_names_the_state_the_refusal_gives(self) -> None:
        episode = self.episode(RetriedEndTransport())
        with self.assertRaises(Exception) as caught:
            episode.heartbeat()
        self.assertEqual(type(caught.exception).__name__, "EpisodeLostError")
        self.assertEqual(getattr(caught.exception, "state"), "ended")
        self.assertIn("state ended", str(caught.exception))
        self.assertNotIn("unknown episode", str(caught.exception))

    def test_the_state_comes_from_the_refusals_state_field_not_its_message(self) -> None:
        reworded = self.episode(RetriedEndTransport(state="ended", message="refused: {action}"))
        self.assertEqual(reworded.end(0.7)["state"], "ended")
        self.assertEqual(reworded.state, "ended")
        contradicted = self.episode(RetriedEndTransport(state="aborted", message="episode 'ep-1' is ended; cannot {action}"))
        with self.assertRaises(EpisodeLostError) as caught:
            contradicted.end(0.7)
        self.assertEqual(caught.exception.state, "aborted")
        self.assertEqual(contradicted.state, "lost")

    def test_an_older_server_without_the_field_still_gives_the_state_in_its_message(self) -> None:
        ended = self.episode(RetriedEndTransport(state=None))
        self.assertEqual(ended.end(0.7)["state"], "ended")
        lost = self.episode(RetriedEndTransport(state=None))
        with self.assertRaises(EpisodeLostError) as caught:
            lost.heartbeat()
        self.assertEqual(caught.exception.state, "ended")
        unreadable = self.episode(RetriedEndTransport(state=None, message="refused: {action}"))
        with self.assertRaises(EpisodeLostError) as caught:
            unreadable.heartbeat()
        self.assertIsNone(caught.exception.state)
        self.assertIn("its state is unknown", caught.exception.message)

    def test_a_url_without_a_scheme_is_a_value_error(self) -> None:
        with self.assertRaises(ValueError) as caught:
            SwarmClient("127.0.0.1:8700", "t")
        self.assertIn("http://", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
