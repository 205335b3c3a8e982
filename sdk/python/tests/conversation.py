"""
Plays a fixed conversation as one client-driven episode and prints its id (JSON). The TypeScript side of
test/sdk/python/token-streams.test.ts plays the same one with the `openai` npm client; the server must
record the same token streams for both.

    python conversation.py <url> <token> <conversation.json>
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List

from _chat import chat

from agentjet import SwarmClient


def main(url: str, token: str, path: str) -> int:
    with open(path, encoding="utf-8") as f:
        script = json.load(f)
    client = SwarmClient(url, token)
    with client.begin_episode("conversation", env="token-streams") as episode:
        messages: List[Dict[str, Any]] = [{"role": "system", "content": script["system"]}]
        for user in script["users"]:
            messages.append({"role": "user", "content": user})
            reply = chat(episode.base_url, episode.api_key, messages, temperature=0, max_tokens=script["maxTokens"])
            messages.append({"role": "assistant", "content": reply["choices"][0]["message"]["content"]})
        episode.end(1.0)
    print(json.dumps({"episode": episode.id}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
