"""
A math agent in plain HTTP (urllib): client-driven episodes of one-digit additions, a group of episodes per
task, rewards from our own checker. The server trains whenever its batching strategy has a batch.

    python sdk/python/examples/math_agent.py --url http://127.0.0.1:8700 --token $AGENTJET_CLIENT_TOKEN --rounds 3

Prints one JSON line per round: episodes, lost ones, mean reward, and the server's step and weight versions.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Tuple

from agentjet import EpisodeLostError, SwarmClient


def make_tasks(n: int, seed: int = 0) -> List[Tuple[str, str, str]]:
    """``n`` additions as (task id, question, answer)."""
    rng = random.Random(seed)
    pairs = rng.sample([(a, b) for a in range(10) for b in range(10)], n)
    return [(f"add-{a}-{b}", f"{a}+{b}=", str(a + b)) for a, b in pairs]


def score(reply: str, answer: str) -> float:
    """1 for the right number; otherwise up to 0.5 for answering in digits at all (shaping for a tiny model)."""
    text = reply.strip()
    if text == answer:
        return 1.0
    return 0.5 * sum(c.isdigit() for c in text) / len(text) if text else 0.0


def ask(base_url: str, api_key: str, question: str) -> Dict[str, Any]:
    """One chat completion, exactly what any OpenAI-compatible client sends."""
    body = json.dumps({"model": "policy", "messages": [{"role": "user", "content": question}]}).encode()
    req = urllib.request.Request(
        f"{base_url}/chat/completions", data=body, method="POST",
        headers={"content-type": "application/json", "authorization": f"Bearer {api_key}"},
    )
    with urllib.request.urlopen(req, timeout=120) as res:
        answer: Dict[str, Any] = json.loads(res.read())
        return answer


def run_episode(client: SwarmClient, task: Tuple[str, str, str], env: str) -> Dict[str, Any]:
    task_id, question, answer = task
    try:
        with client.begin_episode(task_id, env=env) as episode:
            reply = ask(episode.base_url, episode.api_key, question)["choices"][0]["message"]["content"] or ""
            reward = score(reply, answer)
            episode.end(reward, metadata={"reply": reply})
            return {"episode": episode.id, "task": task_id, "reward": reward}
    except EpisodeLostError as err:  # the server gave it up (restart, weight-sync timeout): not trained, move on
        return {"episode": err.episode_id, "task": task_id, "lost": err.code}


def run_round(client: SwarmClient, tasks: List[Tuple[str, str, str]], group_size: int, concurrency: int, env: str = "py-math") -> List[Dict[str, Any]]:
    """Every task ``group_size`` times (one GRPO group each), ``concurrency`` episodes at once."""
    jobs = [task for task in tasks for _ in range(group_size)]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(lambda task: run_episode(client, task, env), jobs))


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="the server (default $AGENTJET_URL)")
    parser.add_argument("--token", help="a client token (default $AGENTJET_CLIENT_TOKEN)")
    parser.add_argument("--tasks", type=int, default=8, help="tasks per round (default 8)")
    parser.add_argument("--group", type=int, default=4, help="episodes per task (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--concurrency", type=int, default=8, help="episodes at once (default 8)")
    args = parser.parse_args(argv)
    client = SwarmClient(args.url, args.token)
    tasks = make_tasks(args.tasks)
    for round_ in range(args.rounds):
        results = run_round(client, tasks, args.group, args.concurrency)
        rewards = [r["reward"] for r in results if "reward" in r]
        status = client.engine_status()
        print(json.dumps({"round": round_, "episodes": len(results), "lost": len(results) - len(rewards), "meanReward": sum(rewards) / max(1, len(rewards)), "step": status.get("step"), "versions": status.get("versions")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
