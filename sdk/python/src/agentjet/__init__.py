"""
agentjet: the Python client of the agentjet swarm server.

Begin a client-driven episode, point any OpenAI-compatible client at ``episode.base_url`` with
``episode.api_key``, and end it with a reward; the server records every call and trains on it::

    from agentjet import SwarmClient

    client = SwarmClient("http://127.0.0.1:8700", token="...")
    with client.begin_episode("task-7", env="arith") as episode:
        answer = my_agent(episode.base_url, episode.api_key)
        episode.end({"main": score(answer)})
"""

from . import errors
from ._transport import Retry
from .client import DEFAULT_URL, SwarmClient
from .episode import Episode
from .errors import (
    CONNECTION_ERROR_CODE,
    EPISODE_LOST_CODE,
    AgentJetError,
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    EpisodeClosedError,
    EpisodeLostError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
)
from .types import FAILURE_KINDS, AbortReason, AgentBinding, EngineState, EngineStatus, EpisodeState, FailureKind

__version__ = "0.1.0"

__all__ = [
    "SwarmClient",
    "Episode",
    "Retry",
    "DEFAULT_URL",
    "AgentBinding",
    "AbortReason",
    "EpisodeState",
    "FailureKind",
    "FAILURE_KINDS",
    "EngineState",
    "EngineStatus",
]
__all__ += errors.__all__
