"""
What a LangChain user writes: ``ChatOpenAI`` with the episode's ``base_url`` and ``api_key``. Chains, tools
and LangGraph agents built on that model train unchanged; every call they make is recorded.

    pip install langchain-openai
    python sdk/python/examples/langchain_agent.py --url http://127.0.0.1:8700 --token $AGENTJET_CLIENT_TOKEN
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import List

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from agentjet import SwarmClient


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args(argv)
    client = SwarmClient(args.url, args.token)
    rewards = []
    for task_id, question, answer in [("add-3-4", "3+4=", "7"), ("add-5-2", "5+2=", "7")]:
        with client.begin_episode(task_id, env="py-langchain") as episode:
            llm = ChatOpenAI(base_url=episode.base_url, api_key=episode.api_key, model=episode.model, max_retries=0)
            reply = llm.invoke([SystemMessage("Answer with a number."), HumanMessage(question)])
            text = str(reply.content)
            reward = 1.0 if text.strip() == answer else 0.0
            episode.end(reward)
            rewards.append(reward)
    print(json.dumps({"episodes": len(rewards), "meanReward": sum(rewards) / len(rewards)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
