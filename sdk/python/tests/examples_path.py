"""Makes sdk/python/examples importable from the tests (``from examples_path import math_agent``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import math_agent  # noqa: E402

__all__ = ["math_agent"]
