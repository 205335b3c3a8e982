"""Says whether torch (and the optional transformers + peft) import, and says it LOUDLY when they do not.

Torch itself is required wherever the trainer is tested (CI installs Debian's python3-torch): its skip
line reads `SKIPPED:`, which the npm test turns into a failure when AGENTJET_REQUIRE_TORCH=1. The Hugging
Face + LoRA tests need transformers and peft, which Debian does not package: theirs reads
`SKIPPED (optional):`.
"""

import importlib.util
import sys


def missing(*modules: str) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def skip_reason(tests: str, *modules: str, optional: bool = False) -> str | None:
    """The skip reason of the `tests` (what they are and their file) when one of `modules` does not import."""
    gone = missing(*modules)
    if not gone:
        return None
    label = "SKIPPED (optional)" if optional else "SKIPPED"
    reason = f"{label}: {', '.join(gone)} not importable by {sys.executable}; {tests} did NOT run"
    print(f"\n{'!' * 100}\n!!! {reason}\n{'!' * 100}\n", file=sys.stderr, flush=True)
    return reason
