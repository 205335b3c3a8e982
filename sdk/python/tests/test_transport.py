"""The transport without a server: backoff timing (a fake clock), error bodies to classes."""

from __future__ import annotations

import unittest
from typing import List

from agentjet import APIConnectionError, AuthenticationError, ConflictError, InternalServerError, NotFoundError, PermissionDeniedError, Retry
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


if __name__ == "__main__":
    unittest.main()
