"""
What the framework examples share: two one-digit additions as client-driven episodes (begin, let the agent
answer through the episode's ``base_url`` and ``api_key``, end with a reward) and one JSON summary line.
An example passes the one part that differs: how its framework asks the model.
"""

from __future__ import annotations

import argparse
import json
from typing import Callable, List

from agentjet import Episode, SwarmClient

TASKS = [("add-3-4", "3+4=", "7"), ("add-5-2", "5+2=", "7")]


def run_additions(answer: Callable[[Episode, str], str], *, env: str, doc: str, argv: List[str]) -> int:
    """Parses ``--url`` and ``--token``, runs one episode a task with ``answer(episode, question)``, prints the summary."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args(argv)
    client = SwarmClient(args.url, args.token)
    rewards = []
    for task_id, question, expected in TASKS:
        with client.begin_episode(task_id, env=env) as episode:
            reward = 1.0 if answer(episode, question).strip() == expected else 0.0
            episode.end(reward)
            rewards.append(reward)
    print(json.dumps({"episodes": len(rewards), "meanReward": sum(rewards) / len(rewards)}))
    return 0
