"""Synthetic multi-turn workloads of AppWorld and Werewolves shape, and timeline merging over them.

A call is (context messages, output tokens). A message is (id, tokens, generated): the same id means
the same message. Merging follows the swarm server's rule: newest timeline first, a timeline (context +
output) absorbs every older one whose messages are a message-wise prefix of it; a timeline that is not
absorbed is a sample of its own. Standard library only, so the shapes can be checked anywhere.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Message:
    id: int
    tokens: int
    generated: bool


@dataclass
class Call:
    context: list[Message]
    output: Message


@dataclass
class SampleShape:
    """Message layout of one training sample: lengths and which messages are trained."""

    messages: list[Message]
    trained: set[int]

    @property
    def length(self) -> int:
        return sum(m.tokens for m in self.messages)


class _Ids:
    def __init__(self, token_scale: float = 1.0) -> None:
        self.n = 0
        self.token_scale = token_scale

    def msg(self, tokens: int, generated: bool = False) -> Message:
        self.n += 1
        return Message(self.n, max(1, round(tokens * self.token_scale)), generated)


def appworld_episode(rng: random.Random, ids: _Ids, steps: int) -> list[Call]:
    """System prompt + task + API docs, then steps of (code answer, execution output), all kept."""
    history = [ids.msg(rng.randint(1300, 1700)), ids.msg(rng.randint(150, 250))]
    calls = []
    for _ in range(steps):
        out = ids.msg(rng.randint(100, 250), generated=True)
        calls.append(Call(list(history), out))
        history += [out, ids.msg(rng.randint(150, 450))]
    return calls


def werewolves_agent(rng: random.Random, ids: _Ids, calls_n: int, decision_every: int) -> list[Call]:
    """One player's calls: game events and own speeches kept in memory; every `decision_every`-th call is a
    structured decision (vote, kill) whose format prompt and JSON answer are not kept, so it is its own timeline."""
    history = [ids.msg(rng.randint(900, 1300))]
    calls = []
    for k in range(calls_n):
        history.append(ids.msg(rng.randint(120, 320)))
        if (k + 1) % decision_every == 0:
            calls.append(Call(history + [ids.msg(rng.randint(100, 180))], ids.msg(rng.randint(15, 40), generated=True)))
        else:
            out = ids.msg(rng.randint(50, 140), generated=True)
            calls.append(Call(list(history), out))
            history.append(out)
    return calls


def unmerged(calls: list[Call]) -> list[SampleShape]:
    return [SampleShape(c.context + [c.output], {c.output.id}) for c in calls]


def merged(calls: list[Call]) -> list[SampleShape]:
    timelines = [c.context + [c.output] for c in calls]
    absorbed = [False] * len(timelines)
    samples = []
    for i in range(len(timelines) - 1, -1, -1):
        if absorbed[i]:
            continue
        t = timelines[i]
        trained = {t[-1].id}
        for j in range(i - 1, -1, -1):
            older = timelines[j]
            if not absorbed[j] and len(older) <= len(t) and [m.id for m in older] == [m.id for m in t[: len(older)]]:
                absorbed[j] = True
                trained.add(older[-1].id)
        samples.append(SampleShape(t, trained))
    return samples


def workload(name: str, seed: int, units: int, token_scale: float = 1.0) -> list[list[Call]]:
    """`units` episodes (AppWorld) or trained agents (Werewolves: the 3 wolves of each game). `token_scale`
    shrinks every message (at least 1 token) and keeps the call structure: the CPU smoke run's workloads."""
    rng = random.Random(seed)
    ids = _Ids(token_scale)
    if name == "appworld":
        return [appworld_episode(rng, ids, rng.randint(20, 25)) for _ in range(units)]
    if name == "werewolves":
        return [werewolves_agent(rng, ids, rng.randint(26, 32), 6) for _ in range(units)]
    raise ValueError(name)


def describe(groups: list[list[Call]]) -> dict:
    u = [s for g in groups for s in unmerged(g)]
    m = [s for g in groups for s in merged(g)]
    trained = lambda ss: sum(x.tokens for s in ss for x in s.messages if x.id in s.trained)  # noqa: E731
    return {
        "calls": len(u),
        "unmerged_samples": len(u),
        "merged_samples": len(m),
        "unmerged_tokens": sum(s.length for s in u),
        "merged_tokens": sum(s.length for s in m),
        "trained_tokens_unmerged": trained(u),
        "trained_tokens_merged": trained(m),
        "longest": max(s.length for s in m),
    }


if __name__ == "__main__":
    for name, units in (("appworld", 4), ("werewolves", 3)):
        d = describe(workload(name, 0, units))
        print(name, d, f"token ratio {d['unmerged_tokens'] / d['merged_tokens']:.2f}x")
