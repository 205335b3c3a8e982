"""An agentjet environment written in Python: the agent adds two numbers, with one retry.

It speaks the environment protocol (docs/environment-protocol.md) itself, on stdin/stdout: one JSON
request per line in, one JSON reply per line out. stdout belongs to the protocol; log to stderr.
"""
import json
import random
import sys


def generate_tasks(split, seed, count):
    rng = random.Random(seed)
    return [{"id": f"{split}-{seed}-{i}", "split": split, "data": {"a": rng.randint(-50, 50), "b": rng.randint(0, 50)}} for i in range(count)]


def ask(text):
    return {"solver": {"messages": [{"role": "user", "content": text}]}}


class Episode:
    """One episode: a question, and a second try after a wrong answer (a multi-turn episode: done false)."""

    def __init__(self, task):
        self.a = task["data"]["a"]
        self.b = task["data"]["b"]
        self.tries = 0

    def reset(self):
        return {"observations": ask(f"What is {self.a} + {self.b}? Reply with the number only."), "done": False}

    def step(self, actions):
        self.tries += 1
        answer = actions.get("solver", "").strip()
        correct = answer == str(self.a + self.b)
        if correct or self.tries >= 2:
            return {"observations": {}, "done": True, "rewards": {"solver": 1 if correct else 0}, "info": {"correct": correct}}
        return {"observations": ask("Not quite. Try once more: the number only."), "done": False}


episode = None


def handle(request):
    global episode
    op, params = request["op"], request.get("params") or {}
    if op == "ping":
        return "pong"
    if op == "reset":
        episode = Episode(params["task"])
        return episode.reset()
    if op == "step":
        if episode is None:
            raise RuntimeError("step before reset")
        return episode.step(params["actions"])
    if op == "close":
        episode = None
        return None
    if op == "tasks":
        return generate_tasks(params["split"], params["seed"], params["count"])
    if op == "solve":
        data = params["task"]["data"]
        return str(data["a"] + data["b"])
    raise ValueError(f"unknown op {op!r}")


def main():
    for line in sys.stdin:
        request_id = -1
        try:
            request = json.loads(line)
            request_id = request.get("id", -1)
            reply = {"id": request_id, "ok": True, "result": handle(request)}
        except Exception as err:  # the environment's own failure is a reply, not a dead process
            reply = {"id": request_id, "ok": False, "error": {"message": f"{type(err).__name__}: {err}"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
