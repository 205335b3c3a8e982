"""One client-driven episode: its keys, heart-beats, and the end (rewards) or abort that closes it."""

from __future__ import annotations

import math
import re
import threading
import warnings
import weakref
from types import TracebackType
from typing import Any, Dict, Mapping, Optional, Type, Union

from ._transport import Retry, Transport, to_json
from .errors import AgentJetError, APIStatusError, ConflictError, EpisodeClosedError, EpisodeLostError, NotFoundError
from .types import AgentBinding, EpisodeState, FailureKind

__all__ = ["Episode"]

Rewards = Union[float, Mapping[str, float]]

REWARDS_REFUSED = "AJ_ERR_EPISODE_REWARDS"
"""The server refused the rewards (outside the environment's range, ...) and aborted the episode."""
STATE_REFUSED = "AJ_ERR_EPISODE_STATE"
"""The server refused a transition; its error body's ``state`` is the episode's current state."""
_STATE_IN_REFUSAL = re.compile(r"episode '[^']*' is ([a-z-]+); cannot ")


class Episode:
    """
    An episode this client began. Point any OpenAI-compatible client at ``base_url`` with ``api_key`` (or
    ``api_keys[agent]``); every call is recorded for training. Close it with :meth:`end` (rewards) or
    :meth:`abort` (an infrastructure or agent failure: never trained, never scored 0).

    Used as a context manager, an exception inside the block aborts the episode and propagates, so a
    crashed agent never becomes reward 0. A background thread heart-beats every ``heartbeat_interval_s``
    while the episode is open, so slow tools do not let the server reclaim it; an episode dropped without
    :meth:`end` or :meth:`abort` (garbage-collected) stops heart-beating and is aborted, so it never stays
    claimed on the server for the life of the process.
    """

    id: str
    """The server's episode id."""
    task_id: str
    env: str
    agents: Dict[str, AgentBinding]
    """agent id -> binding (``{"kind": "policy" | "frozen", "target": name}``)."""
    base_url: str
    """The server's OpenAI base URL (``http://host:port/v1``)."""
    api_keys: Dict[str, str]
    """agent id -> episode-scoped API key (``sk-aj-...``)."""
    info: Dict[str, Any]
    """The server's episode JSON as the begin call returned it."""
    last_heartbeat_error: Optional[AgentJetError]
    """The background heart-beat's latest failure (it keeps trying), or None."""

    def __init__(self, transport: Transport, episode: Mapping[str, Any], base_url: str, keys: Mapping[str, str], *, heartbeat_interval_s: Optional[float]) -> None:
        self._transport = transport
        self.info = dict(episode)
        self.id = str(episode["episodeId"])
        self.task_id = str(episode.get("taskId", ""))
        self.env = str(episode.get("env", ""))
        self.agents = {str(k): AgentBinding(kind=v["kind"], target=v["target"]) for k, v in dict(episode.get("agents") or {}).items()}
        self.base_url = base_url.rstrip("/")
        self.api_keys = dict(keys)
        self.last_heartbeat_error = None
        self._state: EpisodeState = "running"
        self._lost: Optional[EpisodeLostError] = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        if heartbeat_interval_s is not None and heartbeat_interval_s > 0:
            # The thread holds the episode only weakly: an episode its caller dropped is collected, and the
            # finalizer wakes the thread to abort it instead of heart-beating it for the life of the process.
            dropped = threading.Event()
            finalizer = weakref.finalize(self, _on_drop, self.id, self._stop, dropped)
            finalizer.atexit = False
            self._thread = threading.Thread(
                target=_beat_loop,
                args=(weakref.ref(self), self._stop, dropped, heartbeat_interval_s, transport, self.id),
                name=f"agentjet-heartbeat-{self.id}",
                daemon=True,
            )
            self._thread.start()

    def __repr__(self) -> str:
        return f"Episode(id={self.id!r}, task_id={self.task_id!r}, state={self._state!r}, agents={list(self.agents)!r})"

    @property
    def state(self) -> EpisodeState:
        """``running`` until :meth:`end` or :meth:`abort`; ``lost`` once the server is known to have given it up."""
        return self._state

    @property
    def api_key(self) -> str:
        """The key of the episode's only agent, or of agent ``main``."""
        return self.api_keys[self._sole_agent("api_key")]

    @property
    def model(self) -> str:
        """The target (policy or frozen model) of the only agent or ``main``: a ``model`` value for clients that need one (the server ignores it)."""
        return self.agents[self._sole_agent("model")]["target"]

    def key(self, agent_id: str) -> str:
        """The API key of one agent."""
        return self.api_keys[agent_id]

    def heartbeat(self) -> Dict[str, Any]:
        """Refreshes the server's idle timer (any chat call does too). Raises :class:`EpisodeLostError` if the server gave the episode up."""
        return self._close_call("heartbeat", None)

    def end(self, rewards: Rewards, metadata: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """
        Ends the episode with rewards: ``{agent_id: reward}``, or one number for a single-agent episode.
        Every agent bound to a policy needs a finite reward (``ValueError`` before anything is sent); frozen
        agents may be left out. ``metadata`` must be JSON: NaN or infinity in it is a ``ValueError``, also
        before anything is sent. Returns the server's episode JSON. Raises :class:`EpisodeLostError` when the
        server already gave the episode up (nothing of it is trained), and :class:`BadRequestError`
        (``AJ_ERR_EPISODE_REWARDS``) when the server refuses the rewards (e.g. outside the environment's
        declared range): the server has then aborted the episode, and :attr:`state` is ``aborted``.
        """
        by_agent = self._rewards(rewards)
        body: Dict[str, Any] = {"rewards": by_agent}
        if metadata is not None:
            body["metadata"] = dict(metadata)
            to_json(body)  # ValueError / TypeError here, while the episode still runs and heart-beats
        return self._finish("end", body, "ended")

    def abort(self, reason: str, kind: Union[FailureKind, str] = "workflow") -> Dict[str, Any]:
        """
        Gives the episode up: it is masked out of training, never scored 0. ``kind`` says what failed, in
        the server's vocabulary (:data:`agentjet.FAILURE_KINDS`): ``workflow`` (the agent code), ``crash``,
        ``timeout``, ``oom`` (the environment), ``client-lost``, ... Aborting an episode that is already
        closed or lost does nothing.
        """
        if self._state != "running":
            return dict(self.info)
        try:
            return self._finish("abort", {"reason": {"kind": kind, "message": reason}}, "aborted")
        except EpisodeLostError:
            return dict(self.info)

    def __enter__(self) -> "Episode":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._state != "running":
            return
        if exc is None:
            warnings.warn(f"episode {self.id}: the with-block ended without end() or abort(); aborting it", RuntimeWarning, stacklevel=2)
            self.abort("the with-block ended without end() or abort()")
            return
        kind: FailureKind = "client-lost" if isinstance(exc, KeyboardInterrupt) else "workflow"
        try:
            self.abort(f"{type(exc).__name__}: {exc}"[:2000], kind=kind)
        except AgentJetError:
            pass  # the agent's own exception is the one to see; the server reclaims the episode when idle

    def _sole_agent(self, what: str) -> str:
        if len(self.api_keys) == 1:
            return next(iter(self.api_keys))
        if "main" in self.api_keys:
            return "main"
        raise AttributeError(f"episode {self.id} has agents {sorted(self.api_keys)}: use {'key(agent_id)' if what == 'api_key' else 'agents[agent_id]'}")

    def _rewards(self, rewards: Rewards) -> Dict[str, float]:
        if isinstance(rewards, Mapping):
            by_agent = {str(k): v for k, v in rewards.items()}
        elif len(self.agents) == 1:
            by_agent = {next(iter(self.agents)): rewards}
        else:
            raise ValueError(f"episode {self.id} has agents {sorted(self.agents)}: pass rewards as {{agent_id: reward}}")
        for agent, value in by_agent.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"episode {self.id}: reward of agent '{agent}' must be a finite number, got {value!r}")
            if agent not in self.agents:
                raise ValueError(f"episode {self.id}: no agent '{agent}' (agents: {sorted(self.agents)})")
        # The server aborts an episode whose rewards leave out an agent it trains: refuse it here, where the
        # caller can still fix the call and end the episode.
        missing = sorted(a for a, b in self.agents.items() if b.get("kind") == "policy" and a not in by_agent)
        if missing:
            raise ValueError(
                f"episode {self.id}: no reward for {', '.join(repr(a) for a in missing)}: every agent bound to a policy needs one (frozen agents may be left out)"
            )
        return {k: float(v) for k, v in by_agent.items()}

    def _finish(self, action: str, body: Mapping[str, Any], final: EpisodeState) -> Dict[str, Any]:
        with self._lock:
            if self._lost is not None:
                raise self._lost
            if self._state != "running":
                raise EpisodeClosedError(self.id, self._state, action)
            self._stop_heartbeats()
            try:
                answer = self._close_call(action, body, final=final)
            except APIStatusError as err:
                if err.code == REWARDS_REFUSED:
                    self._state = "aborted"  # the server aborted the episode when it refused the rewards
                raise
            self._state = final
            return answer

    def _close_call(self, action: str, body: Optional[Mapping[str, Any]], *, final: Optional[EpisodeState] = None, retry: Optional[Retry] = None) -> Dict[str, Any]:
        if self._lost is not None:
            raise self._lost
        try:
            answer = self._transport.request("POST", f"/v1/episodes/{self.id}/{action}", body, idempotent=True, retry=retry)
        except (ConflictError, NotFoundError) as err:
            # The server's view when this token may read it (GET /v1/episodes/:id takes the admin token),
            # else the state its refusal carries.
            server = self._server_view()
            state = server.get("state") if server is not None else _refused_state(err)
            if final is not None and state == final:
                # A retried end/abort whose first try the server had already applied.
                if server is None:
                    server = {**self.info, "state": final}
                    if body is not None and "rewards" in body:
                        server["rewards"] = dict(body["rewards"])
                self.info = server
                return dict(server)
            if state is not None:
                known = f"state {state}{'; ' + _reason_text(server) if server and server.get('abortReason') else ''}"
            else:
                known = "unknown episode" if isinstance(err, NotFoundError) else "its state is unknown"
            self._lost = EpisodeLostError(
                self.id,
                f"episode {self.id}: the server no longer runs it ({known}); nothing of it is trained. Server said: {err.message}",
                code=err.code,
                state=None if state is None else str(state),
                abort_reason=None if server is None else server.get("abortReason"),
            )
            self._lost.__cause__ = err
            self._state = "lost"
            self._stop.set()
            raise self._lost from err
        episode = answer.get("episode") if isinstance(answer, dict) else None
        if isinstance(episode, dict):
            self.info = episode
        return dict(self.info)

    def _server_view(self) -> Optional[Dict[str, Any]]:
        try:
            answer = self._transport.request("GET", f"/v1/episodes/{self.id}", idempotent=True)
        except AgentJetError:
            return None
        episode = answer.get("episode") if isinstance(answer, dict) else None
        return episode if isinstance(episode, dict) else None

    def _stop_heartbeats(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()  # bounded: one heartbeat's retries last at most its interval plus a request timeout


def _on_drop(episode_id: str, stop: threading.Event, dropped: threading.Event) -> None:
    """The finalizer of an episode collected while its heart-beat thread ran (never ended or aborted)."""
    warnings.warn(f"episode {episode_id} was dropped without end() or abort(); aborting it", ResourceWarning, stacklevel=2)
    dropped.set()
    stop.set()


def _beat_loop(ref: "weakref.ReferenceType[Episode]", stop: threading.Event, dropped: threading.Event, interval_s: float, transport: Transport, episode_id: str) -> None:
    """Heart-beats the episode until it closes, holding it only weakly between beats (see ``Episode.__init__``)."""
    retry = Retry(total_s=interval_s, initial_s=min(0.2, interval_s / 4), max_s=max(interval_s / 2, 0.05))
    while not stop.wait(interval_s):
        episode = ref()
        if episode is None:
            break
        try:
            episode._close_call("heartbeat", None, retry=retry)
            episode.last_heartbeat_error = None
        except EpisodeLostError:
            return
        except AgentJetError as err:
            episode.last_heartbeat_error = err
        finally:
            del episode  # no strong reference while waiting: the caller may drop the episode
    if dropped.is_set() or ref() is None:  # collected: its finalizer may not have run yet
        reason = {"kind": "workflow", "message": "the Episode object was dropped without end() or abort()"}
        try:
            transport.request("POST", f"/v1/episodes/{episode_id}/abort", {"reason": reason}, retry=retry)
        except AgentJetError:
            pass  # the server reclaims it once idle


def _refused_state(err: APIStatusError) -> Optional[str]:
    """
    The episode's state a 409 ``AJ_ERR_EPISODE_STATE`` refusal carries (``error.state``), or None. A server
    older than that field only names it in the message ("episode '...' is ended; cannot end"): read there.
    """
    if err.code != STATE_REFUSED:
        return None
    error = err.body.get("error") if isinstance(err.body, dict) else None
    state = error.get("state") if isinstance(error, dict) else None
    if isinstance(state, str) and state:
        return state
    match = _STATE_IN_REFUSAL.search(err.message)
    return match.group(1) if match else None


def _reason_text(server: Mapping[str, Any]) -> str:
    reason = server.get("abortReason")
    if isinstance(reason, dict):
        return f"{reason.get('kind')}: {reason.get('message')}"
    return str(reason)
