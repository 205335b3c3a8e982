"""Trainer protocol v1 over the standard library's threaded HTTP server.

The backend does the work (see backend.py); this module only speaks the protocol. Mutating requests
are serialised by one lock: a second one while one runs is answered 409 `busy`, never queued, so a
client that timed out and retried learns it instead of stepping twice; once the step is done, the same
step sent again (its `step_id` and `expected_version`) gets the answer the client lost.
"""

from __future__ import annotations

import json
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

from . import PROTOCOL_HEADER, PROTOCOL_VERSION
from .protocol import ProtocolError, Publish, TrainStep, parse_load, parse_publish, parse_save, parse_train_step


class Backend(Protocol):
    mode: str
    model_name: str
    version: int
    steps: int
    tokens_trained: int

    def train_step(self, step: TrainStep) -> dict: ...
    def publish(self, request: Publish) -> dict: ...
    def save(self, directory: str) -> None: ...
    def load(self, directory: str) -> None: ...


MAX_BODY = 1 << 30


def make_server(backend: Backend, host: str = "127.0.0.1", port: int = 8800, api_key: str | None = None) -> ThreadingHTTPServer:
    lock = threading.Lock()
    busy = threading.Event()
    #: The last step applied with a `step_id`: its id, its expected version and its answer.
    last_step: dict = {}

    def status() -> dict:
        return {
            "protocol": PROTOCOL_VERSION,
            "version": backend.version,
            "mode": backend.mode,
            "model": backend.model_name,
            "busy": busy.is_set(),
            "steps": backend.steps,
            "tokens_trained": backend.tokens_trained,
        }

    def train_step(body: object) -> dict:
        step = parse_train_step(body)
        answer = last_step.get("answer")
        if (
            answer is not None
            and step.step_id == last_step["step_id"]
            and step.expected_version == last_step["expected_version"]
            and answer["version"] == backend.version
        ):
            return answer  # applied once already; its answer was lost on the way
        if step.expected_version != backend.version:
            raise ProtocolError(409, "version_conflict", f"trainer is at {backend.version}, step expects {step.expected_version}", "expected_version")
        metrics = backend.train_step(step)
        out = {"version": backend.version, "metrics": metrics}
        last_step.clear()
        if step.step_id is not None:
            last_step.update(step_id=step.step_id, expected_version=step.expected_version, answer=out)
        return out

    def publish(body: object) -> dict:
        request = parse_publish(body)
        if request.version != backend.version:
            raise ProtocolError(409, "version_conflict", f"trainer is at {backend.version}, cannot publish {request.version}", "version")
        return backend.publish(request)

    def save(body: object) -> dict:
        directory = parse_save(body)
        backend.save(directory)
        return {"dir": directory, "version": backend.version}

    def load(body: object) -> dict:
        directory = parse_load(body)
        backend.load(directory)
        last_step.clear()
        return {"dir": directory, "version": backend.version}

    routes = {
        "/v1/train_step": train_step,
        "/v1/publish": publish,
        "/v1/save": save,
        "/v1/load": load,
    }

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

        def _send(self, status_code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status_code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header(PROTOCOL_HEADER, str(PROTOCOL_VERSION))
            self.end_headers()
            self.wfile.write(data)

        def _check(self) -> None:
            spoken = self.headers.get(PROTOCOL_HEADER)
            if spoken is not None and spoken != str(PROTOCOL_VERSION):
                raise ProtocolError(400, "invalid_request", f"protocol {spoken} is not {PROTOCOL_VERSION}")
            if api_key is not None and self.headers.get("authorization") != f"Bearer {api_key}":
                raise ProtocolError(401, "invalid_request", "missing or wrong api key")

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            try:
                self._check()
                if self.path != "/v1/status":
                    raise ProtocolError(404, "not_found", f"no route GET {self.path}")
                self._send(200, status())
            except ProtocolError as e:
                self._send(e.status, e.body())

        def do_POST(self) -> None:  # noqa: N802
            try:
                length = int(self.headers.get("content-length") or 0)
                if length > MAX_BODY:
                    raise ProtocolError(400, "invalid_request", "body too large")
                raw = self.rfile.read(length) if length else b""
                self._check()
                route = routes.get(self.path)
                if route is None:
                    raise ProtocolError(404, "not_found", f"no route POST {self.path}")
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError as e:
                    raise ProtocolError(400, "invalid_request", f"body is not JSON: {e}") from e
                if not lock.acquire(blocking=False):
                    raise ProtocolError(409, "busy", "another step, save, load or publish is running")
                busy.set()
                try:
                    out = route(body)
                finally:
                    busy.clear()
                    lock.release()
                self._send(200, out)
            except ProtocolError as e:
                self._send(e.status, e.body())
            except Exception as e:  # the version did not move; the controller decides what to do
                traceback.print_exc()
                self._send(500, {"error": {"code": "internal", "message": f"{type(e).__name__}: {e}", "param": None}})

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
