"""The examples in sdk/python/examples run against a real ``agentjet serve``; framework ones wherever the framework is installed."""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

from _server import CLIENT_TOKEN, ServerTestCase

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def interpreter_with(module: str) -> Optional[str]:
    """An interpreter that can import ``module``: $AGENTJET_EXAMPLES_PYTHON, this one, or Debian's (python3-httpx)."""
    for python in [os.environ.get("AGENTJET_EXAMPLES_PYTHON"), sys.executable, "/usr/bin/python3"]:
        if python and subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0:
            return python
    return None


class ExampleTests(ServerTestCase):
    def run_example(self, python: str, name: str, *args: str) -> List[Dict[str, Any]]:
        env = {**os.environ, "PYTHONPATH": SRC}
        result = subprocess.run([python, str(EXAMPLES / name), "--url", self.server.url, "--token", CLIENT_TOKEN, *args], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]

    def test_math_agent_plain_http(self) -> None:
        lines = self.run_example(sys.executable, "math_agent.py", "--rounds", "1", "--tasks", "2", "--group", "2")
        self.assertEqual(len(lines), 1)
        self.assertEqual((lines[0]["round"], lines[0]["episodes"], lines[0]["lost"], lines[0]["versions"]), (0, 4, 0, {"main": 0}))

    def test_httpx_tool_agent(self) -> None:
        python = interpreter_with("httpx")
        if python is None:
            self.skipTest("SKIPPED: no interpreter with httpx (Debian: apt-get install python3-httpx)")
        lines = self.run_example(python, "httpx_tool_agent.py", "--group", "1")
        self.assertEqual(lines[-1]["episodes"], 2)

    def test_framework_examples(self) -> None:
        ran = []
        for name, module in [("openai_sdk_agent.py", "openai"), ("langchain_agent.py", "langchain_openai")]:
            py_compile.compile(str(EXAMPLES / name), doraise=True)
            python = interpreter_with(module)
            if python is None:
                print(f"\n*** {name}: SKIPPED running it, '{module}' is not installed (set AGENTJET_EXAMPLES_PYTHON to a venv that has it) ***", file=sys.stderr)
                continue
            self.assertEqual(self.run_example(python, name)[-1]["episodes"], 2)
            ran.append(name)
        if not ran:
            self.skipTest("SKIPPED: neither openai nor langchain-openai is installed; both examples only compiled")

    def test_the_readme_quickstart_runs(self) -> None:
        readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
        code = readme.split("## Train from Python in 15 lines", 1)[1].split("```python", 1)[1].split("```", 1)[0]
        self.assertLessEqual(len([line for line in code.strip().splitlines() if line.strip()]), 15)
        code = code.replace('"http://127.0.0.1:8700"', repr(self.server.url)).replace('"<client token>"', repr(CLIENT_TOKEN)).replace("range(10) for b in range(10)", "range(2) for b in range(1)")
        env = {**os.environ, "PYTHONPATH": SRC}
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
