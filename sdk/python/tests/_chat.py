"""A raw OpenAI-compatible chat call with urllib (what any framework sends to ``episode.base_url``)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any, Dict, Mapping, Sequence


def chat(base_url: str, api_key: str, messages: Sequence[Mapping[str, Any]], **params: Any) -> Dict[str, Any]:
    body = json.dumps({"model": "policy", "messages": messages, **params}).encode()
    req = urllib.request.Request(f"{base_url}/chat/completions", data=body, method="POST", headers={"content-type": "application/json", "authorization": f"Bearer {api_key}"})
    with urllib.request.urlopen(req, timeout=60) as res:
        answer: Dict[str, Any] = json.loads(res.read())
        return answer
