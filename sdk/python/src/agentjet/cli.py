"""``python -m agentjet``: engine status and the admin token's calls, from a shell."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, List, Optional

from ._transport import Retry
from .client import SwarmClient
from .errors import AgentJetError, APIConnectionError, AuthenticationError, PermissionDeniedError

__all__ = ["main", "exit_code", "EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "EXIT_UNREACHABLE", "EXIT_AUTH"]

EXIT_OK = 0
EXIT_FAILURE = 1
"""The server answered with an error."""
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
"""No answer from the server (after retries)."""
EXIT_AUTH = 4
"""The server refused the token (401) or the token may not call the route (403)."""


ADMIN_COMMANDS = ("configure", "start", "stop")
"""Subcommands that need the admin token."""


def exit_code(err: AgentJetError) -> int:
    """The exit code a script should end with for an uncaught client error."""
    if isinstance(err, (AuthenticationError, PermissionDeniedError)):
        return EXIT_AUTH
    if isinstance(err, APIConnectionError):
        return EXIT_UNREACHABLE
    return EXIT_FAILURE


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentjet",
        description="Talk to an agentjet swarm server. Exit codes: 0 ok, 1 server error, 2 usage, 3 unreachable, 4 token refused.",
    )
    parser.add_argument("--url", help="the server (default $AGENTJET_URL, else http://127.0.0.1:8700)")
    parser.add_argument(
        "--token",
        help="client or admin token (default $AGENTJET_CLIENT_TOKEN, else $AGENTJET_ADMIN_TOKEN; configure, start and stop prefer $AGENTJET_ADMIN_TOKEN)",
    )
    parser.add_argument("--retry-s", type=float, default=5.0, help="retry connection errors this long (default 5)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="engine state, step and weight versions (JSON)")
    sub.add_parser("models", help="the policies and frozen models served (JSON)")
    configure = sub.add_parser("configure", help="admin: send a run config (a JSON file) to a server started without one")
    configure.add_argument("config", help="run config as JSON (agentjet config schema describes it)")
    sub.add_parser("start", help="admin: boot the configured engine")
    sub.add_parser("stop", help="admin: stop the engine")
    sub.add_parser("agree-sync", help="agree to a weight sync (any-client / all-clients batching)")
    args = parser.parse_args(argv)
    token = args.token
    if token is None and args.command in ADMIN_COMMANDS:
        token = os.environ.get("AGENTJET_ADMIN_TOKEN") or None  # the admin's shell often holds both tokens
    try:
        client = SwarmClient(args.url, token, retry=Retry(total_s=args.retry_s))
    except ValueError as err:
        print(f"agentjet: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        result: Any
        if args.command == "status":
            result = client.engine_status()
        elif args.command == "models":
            result = client.models()
        elif args.command == "configure":
            with open(args.config, encoding="utf-8") as f:
                result = client.configure(json.load(f))
        elif args.command == "start":
            result = client.start_engine()
        elif args.command == "stop":
            result = client.stop_engine()
        else:
            result = client.agree_sync()
    except AgentJetError as err:
        hint = " (check --token / $AGENTJET_CLIENT_TOKEN)" if isinstance(err, AuthenticationError) else ""
        print(f"agentjet: {err.message} [{err.code}]{hint}", file=sys.stderr)
        return exit_code(err)
    except (OSError, ValueError) as err:
        print(f"agentjet: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(result, indent=2))
    return EXIT_OK
