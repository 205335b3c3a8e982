"""Wire shapes the client reads and writes (the server's JSON, camelCase as on the wire)."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, get_args

__all__ = ["AgentBinding", "EpisodeState", "EngineState", "EngineStatus", "AbortReason", "FailureKind", "FAILURE_KINDS"]

EpisodeState = Literal["running", "ended", "aborted", "lost"]
"""This client's view of an episode: open, closed by it (ended / aborted), or given up by the server (lost)."""

FailureKind = Literal[
    "crash", "timeout", "oom", "protocol", "start-failed", "workflow", "client-lost",
    "reclaimed", "abandoned", "group-failed", "cancelled", "server-restart", "reward-model",
]
"""Why an episode ended without a reward (the server's vocabulary, sdk/failure-kinds.ts): never a score, always masked out."""

FAILURE_KINDS: Tuple[FailureKind, ...] = get_args(FailureKind)

EngineState = Literal["offline", "booting", "rolling", "draining", "syncing"]


class AgentBinding(TypedDict):
    """Which model plays an agent: a trainable ``policy`` on the server, or a ``frozen`` model (not trained)."""

    kind: Literal["policy", "frozen"]
    target: str


class AbortReason(TypedDict):
    kind: str
    message: str


class EngineStatus(TypedDict, total=False):
    """``GET /v1/engine/status``. Fields the server adds later stay in the dict."""

    state: EngineState
    step: int
    """Steps trained in this run."""
    versions: Dict[str, int]
    """policy -> weight version (empty while offline)."""
    configured: bool
    """Whether a run config is set (``--config`` or :meth:`SwarmClient.configure`)."""
    starts: int
    runDir: Optional[str]
    clients: List[str]
    """Clients connected to ``/swarm``."""
    inFlight: int
    lastRun: Optional[Dict[str, Any]]
    """How the last run ended: ``{reason: done | interrupted | failed, step, error?}``."""
    error: Optional[str]
    """Why the last start failed."""
