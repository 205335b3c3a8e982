"""
What a LangChain user writes: ``ChatOpenAI`` with the episode's ``base_url`` and ``api_key``. Chains, tools
and LangGraph agents built on that model train unchanged; every call they make is recorded.

    pip install langchain-openai
    python sdk/python/examples/langchain_agent.py --url http://127.0.0.1:8700 --token $AGENTJET_CLIENT_TOKEN
"""

from __future__ import annotations

import sys

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from _harness import run_additions
from agentjet import Episode


def answer(episode: Episode, question: str) -> str:
    llm = ChatOpenAI(base_url=episode.base_url, api_key=episode.api_key, model=episode.model, max_retries=0)
    reply = llm.invoke([SystemMessage("Answer with a number."), HumanMessage(question)])
    return str(reply.content)


if __name__ == "__main__":
    sys.exit(run_additions(answer, env="py-langchain", doc=__doc__, argv=sys.argv[1:]))
