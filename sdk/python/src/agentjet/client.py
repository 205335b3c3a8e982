"""``SwarmClient``: begins client-driven episodes on an agentjet swarm server and drives its engine."""

from __future__ import annotations

import os
import socket
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union, cast

from ._transport import Retry, Transport
from .episode import Episode
from .errors import InternalServerError
from .types import AgentBinding, EngineState, EngineStatus

__all__ = ["SwarmClient", "DEFAULT_URL"]

DEFAULT_URL = "http://127.0.0.1:8700"
ENGINE_BUSY = "AJ_ERR_ENGINE_BUSY"

Agents = Union[Sequence[str], Mapping[str, Union[str, AgentBinding]]]


class SwarmClient:
    """
    A connection to one swarm server.

    ``url``: the server, e.g. ``http://gpu-box:8700`` (``http://`` or ``https://``, else ``ValueError``). Default ``$AGENTJET_URL``, else ``http://127.0.0.1:8700``.
    ``token``: a client token (begin, end, abort, status, agree_sync) or the admin token (also configure,
    start, stop). Default ``$AGENTJET_CLIENT_TOKEN``, else ``$AGENTJET_ADMIN_TOKEN``; none: no header.
    ``client_id``: names this client in claims and ``agree_sync``. Default ``py-<hostname>-<pid>``.
    ``timeout_s``: per request (default 60). ``retry``: how connection errors are retried (default ``Retry()``,
    30 s in all). ``heartbeat_interval_s``: background heart-beat of open episodes (default 10; ``None``: off).
    ``busy_wait_s``: how long ``begin_episode`` waits while the engine is busy (a weight sync, a full sample
    pool: 503 ``AJ_ERR_ENGINE_BUSY``) before raising; default 600.
    """

    url: str
    client_id: str

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        client_id: Optional[str] = None,
        timeout_s: float = 60.0,
        retry: Retry = Retry(),
        heartbeat_interval_s: Optional[float] = 10.0,
        busy_wait_s: float = 600.0,
    ) -> None:
        self.url = (url or os.environ.get("AGENTJET_URL") or DEFAULT_URL).rstrip("/")
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https:// (e.g. http://gpu-box:8700), got {self.url!r}")
        if token is None:
            token = os.environ.get("AGENTJET_CLIENT_TOKEN") or os.environ.get("AGENTJET_ADMIN_TOKEN")
        self.client_id = client_id or f"py-{socket.gethostname()}-{os.getpid()}"
        self.heartbeat_interval_s = heartbeat_interval_s
        self.busy_wait_s = busy_wait_s
        self._http = Transport(self.url, token, timeout_s=timeout_s, retry=retry)

    def __repr__(self) -> str:
        return f"SwarmClient(url={self.url!r}, client_id={self.client_id!r})"

    def begin_episode(
        self,
        task_id: str,
        env: Optional[str] = None,
        agents: Optional[Agents] = None,
        eval: bool = False,
        metadata: Optional[Mapping[str, Any]] = None,
        group_id: Optional[str] = None,
    ) -> Episode:
        """
        Begins an episode of ``task_id`` and returns it with its ``base_url`` and one key per agent.

        ``env``: the environment (dataset) the task belongs to; episodes of one (env, task, group) form a GRPO
        group. ``agents``: agent ids (each played by the server's first policy), or ``{agent: policy name}``,
        or ``{agent: {"kind": "policy" | "frozen", "target": name}}``. Default: one agent ``main`` on the first
        policy. ``eval``: an evaluation episode, never trained. ``group_id``: groups episodes of one task
        explicitly (default: the server groups this caller's episodes of the task).
        """
        body: Dict[str, Any] = {"taskId": task_id}
        if env is not None:
            body["env"] = env
        if agents is not None:
            body["agents"] = self._bindings(agents)
        if eval:
            body["eval"] = True
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if group_id is not None:
            body["groupId"] = group_id
        answer = self._begin(body)
        return Episode(self._http, answer["episode"], answer["baseUrl"], answer["keys"], heartbeat_interval_s=self.heartbeat_interval_s)

    def _begin(self, body: Dict[str, Any]) -> Dict[str, Any]:
        # A busy engine (a weight sync, a full sample pool) answers 503 AJ_ERR_ENGINE_BUSY having started
        # nothing: wait it out, up to busy_wait_s.
        deadline = time.monotonic() + self.busy_wait_s
        wait = 0.1
        while True:
            try:
                return cast(Dict[str, Any], self._http.request("POST", "/v1/episodes/begin", body, idempotent=False))
            except InternalServerError as err:
                if err.code != ENGINE_BUSY or time.monotonic() + wait > deadline:
                    raise
            time.sleep(wait)
            wait = min(wait * 2, 2.0)

    def _first_policy(self) -> str:
        for model in self.models():
            if model.get("owned_by") == "agentjet-policy":
                return str(model["id"])
        raise ValueError(f"the server at {self.url} serves no policy (GET /v1/models)")

    def models(self) -> List[Dict[str, Any]]:
        """``GET /v1/models``: the policies (``owned_by: agentjet-policy``) and frozen models the server serves."""
        return cast(List[Dict[str, Any]], self._http.request("GET", "/v1/models")["data"])

    def episode_info(self, episode_id: str) -> Dict[str, Any]:
        """``GET /v1/episodes/:id``: the server's view of any episode (finished ones come from run.db)."""
        return cast(Dict[str, Any], self._http.request("GET", f"/v1/episodes/{episode_id}")["episode"])

    def episode_calls(self, episode_id: str) -> List[Dict[str, Any]]:
        """``GET /v1/episodes/:id/calls``: every recorded call (token ids, log-probs, weight version)."""
        return cast(List[Dict[str, Any]], self._http.request("GET", f"/v1/episodes/{episode_id}/calls")["calls"])

    def engine_status(self) -> EngineStatus:
        """``GET /v1/engine/status``: ``state`` (offline, booting, rolling, draining, syncing), ``step``, ``versions``."""
        return cast(EngineStatus, self._http.request("GET", "/v1/engine/status"))

    def agree_sync(self) -> Dict[str, Any]:
        """Agrees to a weight sync (batching strategies ``any-client`` / ``all-clients``)."""
        return cast(Dict[str, Any], self._http.request("POST", "/v1/engine/agree-sync", {"clientId": self.client_id}))

    def configure(self, config: Mapping[str, Any]) -> Dict[str, Any]:
        """Admin: sends a run config (the YAML's content as a dict) to a server started without one."""
        return cast(Dict[str, Any], self._http.request("POST", "/v1/engine/config", {"config": dict(config)}, idempotent=False))

    def start_engine(self) -> Dict[str, Any]:
        """Admin: boots the configured engine; poll :meth:`wait_for_engine` until it rolls."""
        return cast(Dict[str, Any], self._http.request("POST", "/v1/engine/start", {}, idempotent=False))

    def stop_engine(self) -> Dict[str, Any]:
        """Admin: stops the engine (in-flight episodes are aborted, never trained)."""
        return cast(Dict[str, Any], self._http.request("POST", "/v1/engine/stop", {}, idempotent=False))

    def wait_for_engine(self, state: EngineState = "rolling", timeout_s: float = 300.0, poll_s: float = 0.5) -> EngineStatus:
        """Polls :meth:`engine_status` until the engine is in ``state``; ``TimeoutError`` after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.engine_status()
            if status.get("state") == state:
                return status
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the engine at {self.url} is {status.get('state')!r}, not {state!r}, after {timeout_s} s")
            time.sleep(poll_s)

    def _bindings(self, agents: Agents) -> Dict[str, Dict[str, str]]:
        if isinstance(agents, Mapping):
            out: Dict[str, Dict[str, str]] = {}
            for agent, binding in agents.items():
                out[str(agent)] = {"kind": "policy", "target": binding} if isinstance(binding, str) else {"kind": binding["kind"], "target": binding["target"]}
            return out
        if isinstance(agents, str):
            raise TypeError("agents: a list of agent ids or a mapping, not one string")
        policy = self._first_policy()
        return {str(agent): {"kind": "policy", "target": policy} for agent in agents}
