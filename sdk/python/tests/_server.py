"""Spawns a real ``agentjet serve`` (or ``train``) for the tests: ``node bin/agentjet.js ...`` on a free port."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

REPO = Path(os.environ.get("AGENTJET_REPO") or Path(__file__).resolve().parents[3])
NODE = os.environ.get("AGENTJET_NODE") or shutil.which("node") or "node"
ADMIN_TOKEN = "aj-test-admin-0123456789"
CLIENT_TOKEN = "aj-test-client-0123456789"
BOOT_TIMEOUT_S = float(os.environ.get("AGENTJET_TEST_BOOT_S", "120"))


def tiny_config(**overrides: Any) -> Dict[str, Any]:
    """A run config with one small embedded policy `main` (greedy, 4 tokens a call) and the arith environment."""
    config: Dict[str, Any] = {
        "policies": {"main": {"tokenizer": "embedded", "engine": {"kind": "embedded", "model": {"layers": 1, "dim": 16, "heads": 2, "context": 128, "seed": 1}}}},
        "environments": [{"name": "arith", "roles": {"solver": "main"}}],
        "sampling": {"temperature": 0, "maxTokens": 4},
    }
    for key, value in overrides.items():
        config[key] = {**config[key], **value} if isinstance(value, dict) and isinstance(config.get(key), dict) else value
    return config


class ServerTestCase(unittest.TestCase):
    """
    A test class that shares one server: started from ``config`` before its first test (the tiny config
    unless the class sets another; ``None`` starts the engine offline) and closed after its last.
    """

    config: Optional[Mapping[str, Any]] = tiny_config()
    server: "Server"

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server(cls.config).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.close()


class Server:
    """
    One ``agentjet <command>`` child process. ``start()`` waits for its "listening" log line and sets ``url``;
    ``stop()`` sends SIGTERM; ``start()`` again reuses the same port and run directory (a restart).
    """

    def __init__(self, config: Optional[Mapping[str, Any]], *, command: str = "serve", extra_args: Optional[List[str]] = None, env: Optional[Mapping[str, str]] = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="agentjet-pysdk-"))
        self.config_path: Optional[Path] = None
        if config is not None:
            self.config_path = self.dir / "config.yaml"
            self.config_path.write_text(json.dumps(config))  # JSON is YAML
        self.run_dir = self.dir / "run"
        self.command = command
        self.extra_args = extra_args or []
        self.env = {**os.environ, "AGENTJET_CHILD": "", "AGENTJET_ADMIN_TOKEN": ADMIN_TOKEN, "AGENTJET_CLIENT_TOKEN": CLIENT_TOKEN, "AGENTJET_KEY_SECRET": "pysdk-tests", **(env or {})}
        self.port = 0
        self.url = ""
        self.proc: Optional["subprocess.Popen[str]"] = None
        self.lines: List[str] = []
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._pump_thread = threading.Thread()

    def start(self) -> "Server":
        config = [] if self.config_path is None else ["--config", str(self.config_path)] if self.command == "serve" else [str(self.config_path)]
        args = [NODE, str(REPO / "bin" / "agentjet.js"), self.command, *config, "--port", str(self.port), "--run-dir", str(self.run_dir), *self.extra_args]
        self.proc = subprocess.Popen(args, cwd=str(self.dir), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._lines = queue.Queue()
        self._pump_thread = threading.Thread(target=self._pump, args=(self.proc, self._lines), daemon=True)
        self._pump_thread.start()
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while True:
            try:
                line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = ""
            if line is None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"agentjet {self.command} did not start:\n" + "\n".join(self.lines[-40:]))
            address = _address(line)
            if address:
                self.url = address
                self.port = int(address.rsplit(":", 1)[1])
                if self.command == "serve" and self.config_path is not None:
                    self._wait_rolling(deadline)
                return self

    def _wait_rolling(self, deadline: float) -> None:
        """`serve --config` listens, then boots the engine: wait until it rolls."""
        from agentjet import NotFoundError, SwarmClient

        admin = SwarmClient(self.url, ADMIN_TOKEN)
        while True:
            try:
                if admin.engine_status().get("state") == "rolling":
                    return
            except NotFoundError:
                return  # a server without engine routes serves at once
            if time.monotonic() > deadline:
                raise RuntimeError("the engine did not start rolling:\n" + "\n".join(self.lines[-40:]))
            time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM) -> Optional[int]:
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._pump_thread.join(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        return proc.returncode

    def wait_for_lines(self, needle: str, count: int, timeout_s: float) -> List[str]:
        """Waits until ``count`` lines of the child's output contain ``needle``; returns them."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = [line for line in self.lines if needle in line]
            if len(found) >= count:
                return found
            if time.monotonic() > deadline or (self.proc is not None and self.proc.poll() is not None and len(found) < count and not self._pump_thread.is_alive()):
                raise TimeoutError(f"{len(found)} of {count} lines with {needle!r} after {timeout_s} s:\n" + "\n".join(self.lines[-40:]))
            time.sleep(0.2)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _pump(self, proc: "subprocess.Popen[str]", lines: "queue.Queue[Optional[str]]") -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.append(line.rstrip("\n"))
            lines.put(line)
        lines.put(None)


def _address(line: str) -> Optional[str]:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    msg = str(entry.get("msg", ""))
    if isinstance(entry.get("address"), str) and "listening" in msg:
        return str(entry["address"])  # agentjet serve
    if msg.startswith("Server listening at http"):
        return msg.split()[-1]  # fastify's own line
    message = str(entry.get("message", ""))
    if entry.get("type") == "log" and message.startswith("server http"):
        return message.split()[1].rsplit("/v1", 1)[0]  # agentjet train --json: "server http://host:port/v1, ..."
    return None
