"""JSON over HTTP with the standard library: bearer auth, error bodies to exceptions, retries with backoff."""

from __future__ import annotations

import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from .errors import APIConnectionError, status_error

__all__ = ["Retry", "Transport", "to_json"]


@dataclass(frozen=True)
class Retry:
    """
    How a request is retried when the server cannot be reached (connection refused, reset, timed out) or
    answers 503 (up, but its engine is booting or syncing: it did nothing).

    Requests the server may already have acted on (``begin``) are retried only when the connection was
    refused, i.e. nothing was sent; the others are safe to repeat. Other error answers are never retried.
    """

    total_s: float = 30.0
    """Give up (``APIConnectionError``) once this many seconds have passed since the first try."""
    initial_s: float = 0.2
    """First wait; each next one doubles, up to ``max_s``, with +-20% jitter."""
    max_s: float = 3.0
    """Longest single wait."""


NO_RETRY = Retry(total_s=0.0)


def _refused(err: BaseException) -> bool:
    """True when the request surely never reached the server."""
    reason = err.reason if isinstance(err, urllib.error.URLError) else err
    return isinstance(reason, (ConnectionRefusedError, socket.gaierror))


def _connection_failure(err: BaseException) -> bool:
    if isinstance(err, urllib.error.HTTPError):
        return False
    if isinstance(err, urllib.error.URLError):
        return isinstance(err.reason, OSError)
    return isinstance(err, (OSError, http.client.HTTPException))


class Transport:
    """One server (``url``) and one token. Thread-safe: every request opens its own connection."""

    def __init__(
        self,
        url: str,
        token: Optional[str],
        *,
        timeout_s: float,
        retry: Retry,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.retry = retry
        self._sleep = sleep
        self._clock = clock

    def request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, *, idempotent: bool = True, retry: Optional[Retry] = None) -> Any:
        """Sends one request and returns the parsed JSON answer; raises ``APIStatusError`` or ``APIConnectionError``."""
        policy = self.retry if retry is None else retry
        url = f"{self.url}{path}"
        headers = {"accept": "application/json"}
        data = None
        if method != "GET":  # the server refuses bodiless POSTs (a browser's "simple" request)
            data = to_json({} if body is None else body).encode("utf-8")
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        start = self._clock()
        wait = policy.initial_s
        attempt = 0
        while True:
            attempt += 1
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                    return _parse(res.read())
            except urllib.error.HTTPError as err:
                with err:
                    error = status_error(err.code, _parse(err.read()), method=method, url=url)
                # 503: the server is up but cannot act yet (its engine is booting or syncing); it did nothing.
                if err.code != 503 or not idempotent or not self._pause(start, wait, policy):
                    raise error from None
            except Exception as err:
                if not _connection_failure(err):
                    raise
                if not (idempotent or _refused(err)) or not self._pause(start, wait, policy):
                    why = getattr(err, "reason", err)
                    raise APIConnectionError(
                        f"{method} {url}: cannot reach the agentjet server after {attempt} attempt(s) in {self._clock() - start:.1f} s: {why}", url
                    ) from err
            wait = min(wait * 2, policy.max_s)

    def _pause(self, start: float, wait: float, policy: Retry) -> bool:
        """Sleeps about ``wait`` (+-20%) and returns True, or returns False when that would pass ``policy.total_s``."""
        pause = wait * random.uniform(0.8, 1.2)
        if self._clock() - start + pause > policy.total_s:
            return False
        self._sleep(pause)
        return True


def to_json(body: Any) -> str:
    """The request body as strict JSON: ``ValueError`` for NaN or infinity (which the server cannot parse), ``TypeError`` for what JSON cannot hold."""
    try:
        return json.dumps(body, allow_nan=False)
    except ValueError as err:
        raise ValueError(f"the request body is not valid JSON: {err} (NaN and infinity have no JSON form; send null or a string)") from None


def _parse(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text
