"""
A small OpenAI-style client on httpx with a tool loop: the model may call a ``calculator`` tool; tool results
go back as ``tool`` messages until it answers. Every call of the loop is recorded and merged by the server
into one training sample per agent. httpx is this example's only dependency (Debian: python3-httpx); the
agentjet SDK itself needs none.

    python sdk/python/examples/httpx_tool_agent.py --url http://127.0.0.1:8700 --token $AGENTJET_CLIENT_TOKEN
"""

from __future__ import annotations

import argparse
import ast
import json
import operator
import sys
from typing import Any, Callable, Dict, List, Optional

import httpx

from agentjet import EpisodeLostError, SwarmClient

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluates an arithmetic expression such as 3*(4+5).",
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
        },
    }
]

_OPS: Dict[type, Callable[[Any, Any], Any]] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def calculator(expression: str) -> str:
    """A safe evaluator for + - * / and parentheses."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return float(_OPS[type(node.op)](ev(node.left), ev(node.right)))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(f"unsupported expression: {expression!r}")

    try:
        value = ev(ast.parse(expression, mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError) as err:
        return f"error: {err}"
    return str(int(value)) if value.is_integer() else str(value)


class ChatClient:
    """The part of an OpenAI client an agent needs: POST {base_url}/chat/completions with a bearer key."""

    def __init__(self, base_url: str, api_key: str) -> None:
        self._http = httpx.Client(base_url=base_url, headers={"authorization": f"Bearer {api_key}"}, timeout=120)

    def complete(self, messages: List[Dict[str, Any]], tools: Optional[List[Dict[str, Any]]] = None, **params: Any) -> Dict[str, Any]:
        body: Dict[str, Any] = {"model": "policy", "messages": messages, **params}
        if tools:
            body["tools"] = tools
        res = self._http.post("/chat/completions", json=body)
        res.raise_for_status()
        message: Dict[str, Any] = res.json()["choices"][0]["message"]
        return message

    def close(self) -> None:
        self._http.close()


def solve(chat: ChatClient, question: str, max_turns: int = 4) -> str:
    """The tool loop: answer, or call the calculator and read its result, at most ``max_turns`` calls."""
    messages: List[Dict[str, Any]] = [
        {"role": "system", "content": "Solve the problem. You may call the calculator tool."},
        {"role": "user", "content": question},
    ]
    for _ in range(max_turns):
        message = chat.complete(messages, TOOLS)
        messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        calls = message.get("tool_calls") or []
        if not calls:
            return str(message.get("content") or "")
        for call in calls:
            try:
                expression = json.loads(call["function"]["arguments"]).get("expression", "")
            except (ValueError, AttributeError):
                expression = ""
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": calculator(str(expression))})
    return ""


def run(client: SwarmClient, problems: List[Dict[str, str]], env: str = "py-tools") -> List[float]:
    rewards = []
    for problem in problems:
        try:
            with client.begin_episode(problem["id"], env=env) as episode:
                chat = ChatClient(episode.base_url, episode.api_key)
                try:
                    answer = solve(chat, problem["question"])
                finally:
                    chat.close()
                reward = 1.0 if answer.strip() == problem["answer"] else 0.0
                episode.end(reward, metadata={"answer": answer})
                rewards.append(reward)
        except EpisodeLostError:
            continue  # given up by the server: not trained
    return rewards


PROBLEMS = [
    {"id": "tools-1", "question": "What is 17*23?", "answer": "391"},
    {"id": "tools-2", "question": "What is (120-45)/5?", "answer": "15"},
]


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--group", type=int, default=2, help="episodes per problem (default 2)")
    args = parser.parse_args(argv)
    client = SwarmClient(args.url, args.token)
    rewards = run(client, [p for p in PROBLEMS for _ in range(args.group)])
    print(json.dumps({"episodes": len(rewards), "meanReward": sum(rewards) / max(1, len(rewards))}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
