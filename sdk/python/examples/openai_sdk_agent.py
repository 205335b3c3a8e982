"""
What an OpenAI Python SDK user writes: the episode's ``base_url`` and ``api_key`` go where an OpenAI URL and
key would. Nothing else in the agent changes. (The OpenAI Agents SDK takes the same client:
``OpenAIChatCompletionsModel(model=episode.model, openai_client=AsyncOpenAI(base_url=..., api_key=...))``.)

    pip install openai
    python sdk/python/examples/openai_sdk_agent.py --url http://127.0.0.1:8700 --token $AGENTJET_CLIENT_TOKEN
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import List

from openai import OpenAI

from agentjet import SwarmClient


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args(argv)
    client = SwarmClient(args.url, args.token)
    rewards = []
    for task_id, question, answer in [("add-3-4", "3+4=", "7"), ("add-5-2", "5+2=", "7")]:
        with client.begin_episode(task_id, env="py-openai-sdk") as episode:
            llm = OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
            reply = llm.chat.completions.create(model=episode.model, messages=[{"role": "user", "content": question}])
            text = reply.choices[0].message.content or ""
            reward = 1.0 if text.strip() == answer else 0.0
            episode.end(reward)
            rewards.append(reward)
    print(json.dumps({"episodes": len(rewards), "meanReward": sum(rewards) / len(rewards)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
