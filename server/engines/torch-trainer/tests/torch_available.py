"""Says whether torch (+ transformers + peft) import, and says it LOUDLY when they do not."""

import importlib.util
import sys


def missing(*modules: str) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def skip_reason(*modules: str) -> str | None:
    gone = missing(*modules)
    if not gone:
        return None
    reason = f"SKIPPED: {', '.join(gone)} not importable by {sys.executable}; the torch trainer's own tests did NOT run"
    print(f"\n{'!' * 100}\n!!! {reason}\n{'!' * 100}\n", file=sys.stderr, flush=True)
    return reason
