"""
What an OpenAI Python SDK user writes: the episode's ``base_url`` and ``api_key`` go where an OpenAI URL and
key would. Nothing else in the agent changes. (The OpenAI Agents SDK takes the same client:
``OpenAIChatCompletionsModel(model=episode.model, openai_client=AsyncOpenAI(base_url=..., api_key=...))``.)

    pip install openai
    python sdk/python/examples/openai_sdk_agent.py --url http://127.0.0.1:8700 --token $AGENTJET_CLIENT_TOKEN
"""

from __future__ import annotations

import sys

from openai import OpenAI

from _harness import run_additions
from agentjet import Episode


def answer(episode: Episode, question: str) -> str:
    llm = OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
    reply = llm.chat.completions.create(model=episode.model, messages=[{"role": "user", "content": question}])
    return reply.choices[0].message.content or ""


if __name__ == "__main__":
    sys.exit(run_additions(answer, env="py-openai-sdk", doc=__doc__, argv=sys.argv[1:]))
