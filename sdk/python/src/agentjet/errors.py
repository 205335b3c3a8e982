"""Errors of the agentjet client. Server errors carry the server's stable ``AJ_ERR_...`` code.

Tree (status -> class, like openai-python)::

    AgentJetError
    +-- APIConnectionError        the server could not be reached (after retries)
    +-- APIStatusError            the server answered 4xx/5xx: .status, .code, .type, .param, .body
    |   +-- BadRequestError       400, 413, 415, 422
    |   +-- AuthenticationError   401 (missing or wrong token)
    |   +-- PermissionDeniedError 403 (a client token on an admin route)
    |   +-- NotFoundError         404
    |   +-- ConflictError         409 (a refused state transition)
    |   +-- InternalServerError   5xx
    +-- EpisodeLostError          the server gave the episode up (restart, idle reclaim, sync timeout)
    +-- EpisodeClosedError        end()/abort() on an episode this client already closed (a caller bug)
"""

from __future__ import annotations

from typing import Any, Dict, Optional

__all__ = [
    "AgentJetError",
    "APIConnectionError",
    "APIStatusError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "InternalServerError",
    "EpisodeLostError",
    "EpisodeClosedError",
    "CONNECTION_ERROR_CODE",
    "EPISODE_LOST_CODE",
]

CONNECTION_ERROR_CODE = "AJ_ERR_CONNECTION"
"""Client-side code of :class:`APIConnectionError` (the server never answered)."""

EPISODE_LOST_CODE = "AJ_ERR_EPISODE_LOST"
"""Client-side code of :class:`EpisodeLostError` when the server's own answer carried none."""


class AgentJetError(Exception):
    """Base class. ``code`` is a stable ``AJ_ERR_...`` string; tests and callers branch on it, not on messages."""

    code: str
    message: str

    def __init__(self, message: str, code: str) -> None:
        super().__init__(f"{message} ({code})")
        self.message = message
        self.code = code


class APIConnectionError(AgentJetError):
    """No answer from the server: refused, reset, timed out or unresolvable, after every retry."""

    url: str

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message, CONNECTION_ERROR_CODE)
        self.url = url


class APIStatusError(AgentJetError):
    """The server answered with an error status; fields come from its ``{ error: {...} }`` body."""

    status: int
    type: Optional[str]
    param: Optional[str]
    body: Any
    method: str
    url: str

    def __init__(self, status: int, message: str, code: str, *, type: Optional[str], param: Optional[str], body: Any, method: str, url: str) -> None:
        super().__init__(message, code)
        self.status = status
        self.type = type
        self.param = param
        self.body = body
        self.method = method
        self.url = url


class BadRequestError(APIStatusError):
    """400 (``param`` names the field), 413 body too large, 415 not JSON, 422."""


class AuthenticationError(APIStatusError):
    """401: the token is missing or not one the server accepts."""


class PermissionDeniedError(APIStatusError):
    """403: the token is valid but may not call this route (an admin route with a client token)."""


class NotFoundError(APIStatusError):
    """404: unknown episode (``AJ_ERR_EPISODE_NOT_FOUND``) or route (``AJ_ERR_ROUTE_NOT_FOUND``)."""


class ConflictError(APIStatusError):
    """409: the server refused a state transition (``AJ_ERR_EPISODE_STATE``)."""


class InternalServerError(APIStatusError):
    """5xx."""


class EpisodeLostError(AgentJetError):
    """
    The server no longer runs this episode: it restarted, reclaimed the idle claim, or abandoned it at a
    weight sync. Nothing of it is trained and its keys stop working. ``state`` and ``abort_reason`` are the
    server's view when it could be read; ``cause`` is the server error that revealed the loss.
    """

    episode_id: str
    state: Optional[str]
    abort_reason: Optional[Dict[str, Any]]

    def __init__(self, episode_id: str, message: str, *, code: str = EPISODE_LOST_CODE, state: Optional[str] = None, abort_reason: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message, code)
        self.episode_id = episode_id
        self.state = state
        self.abort_reason = abort_reason


class EpisodeClosedError(AgentJetError):
    """``end()`` or ``abort()`` on an episode this client already ended or aborted; nothing was sent."""

    episode_id: str
    state: str

    def __init__(self, episode_id: str, state: str, action: str) -> None:
        super().__init__(f"episode {episode_id} is already {state}; cannot {action} it", "AJ_ERR_EPISODE_STATE")
        self.episode_id = episode_id
        self.state = state


_BY_STATUS = {400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError, 409: ConflictError, 413: BadRequestError, 415: BadRequestError, 422: BadRequestError}


def status_error(status: int, body: Any, *, method: str, url: str) -> APIStatusError:
    """The error class for an HTTP status, filled from an OpenAI-shaped error body when there is one."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        message = str(err.get("message") or f"HTTP {status}")
        code = str(err.get("code") or f"HTTP_{status}")
        type_ = err.get("type")
        param = err.get("param")
    else:
        message = (body if isinstance(body, str) and body else f"HTTP {status}")[:500]
        code = f"HTTP_{status}"
        type_ = None
        param = None
    cls = _BY_STATUS.get(status, InternalServerError if status >= 500 else APIStatusError)
    return cls(
        status,
        f"{method} {url}: {message}",
        code,
        type=type_ if isinstance(type_, str) else None,
        param=param if isinstance(param, str) else None,
        body=body,
        method=method,
        url=url,
    )
