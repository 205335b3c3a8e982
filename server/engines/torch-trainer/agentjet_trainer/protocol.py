"""Validation of trainer protocol v1 request bodies, field by field, with the standard library only.

Mirrors server/engines/trainer/protocol.ts (the normative zod schemas): the same rules, the same
error codes and `param` paths.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

ADAPTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
STEP_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


class ProtocolError(Exception):
    """An answer of the error shape {"error": {"code", "message", "param"}} with an HTTP status."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.param = param

    def body(self) -> dict:
        return {"error": {"code": self.code, "message": self.message, "param": self.param}}


def invalid(message: str, param: str | None) -> ProtocolError:
    return ProtocolError(400, "invalid_request", message, param)


@dataclass
class Sample:
    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    advantage: float
    weight: float


@dataclass
class TrainStep:
    expected_version: int
    samples: list[Sample]
    #: The client's id of this batch: the same step sent again after a lost answer gets that answer back.
    step_id: str | None = None


@dataclass
class Publish:
    version: int
    adapter_name: str | None = None
    load_into: list[str] = field(default_factory=list)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: object) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) and math.isfinite(x)


def _obj(body: object, param: str | None = None) -> dict:
    if not isinstance(body, dict):
        raise invalid("expected an object", param)
    return body


def _version(body: dict, key: str) -> int:
    v = body.get(key)
    if not _is_int(v) or v < 0:
        raise invalid(f"{key} must be an integer >= 0", key)
    return v


def _dir(body: object) -> str:
    d = _obj(body).get("dir")
    if not isinstance(d, str) or not d:
        raise invalid("dir must be a non-empty string", "dir")
    return d


def parse_sample(raw: object, param: str) -> Sample:
    s = _obj(raw, param)
    ids = s.get("token_ids")
    mask = s.get("loss_mask")
    lps = s.get("logprobs")
    if not isinstance(ids, list) or len(ids) < 2 or not all(_is_int(t) and t >= 0 for t in ids):
        raise invalid("token_ids must be >= 2 non-negative integers", f"{param}.token_ids")
    if not isinstance(mask, list) or not all(_is_int(m) and m in (0, 1) for m in mask):
        raise invalid("loss_mask must hold 0 and 1 only", f"{param}.loss_mask")
    if not isinstance(lps, list) or not all(_is_number(x) for x in lps):
        raise invalid("logprobs must be finite numbers", f"{param}.logprobs")
    if len(mask) != len(ids):
        raise invalid(f"length {len(mask)} != token_ids length {len(ids)}", f"{param}.loss_mask")
    if len(lps) != len(ids):
        raise invalid(f"length {len(lps)} != token_ids length {len(ids)}", f"{param}.logprobs")
    if mask[0] == 1:
        raise invalid("the first token has no context and cannot be trained", f"{param}.loss_mask.0")
    if 1 not in mask:
        raise invalid("no trained token", f"{param}.loss_mask")
    adv = s.get("advantage")
    w = s.get("weight")
    if not _is_number(adv):
        raise invalid("advantage must be a finite number", f"{param}.advantage")
    if not _is_number(w) or w < 0:
        raise invalid("weight must be a finite number >= 0", f"{param}.weight")
    return Sample(list(ids), list(mask), [float(x) for x in lps], float(adv), float(w))


def parse_train_step(body: object) -> TrainStep:
    b = _obj(body)
    expected = _version(b, "expected_version")
    samples = b.get("samples")
    if not isinstance(samples, list) or not samples:
        raise invalid("samples must be a non-empty array", "samples")
    step_id = b.get("step_id")
    if step_id is not None and (not isinstance(step_id, str) or not STEP_ID.match(step_id)):
        raise invalid("step_id must be 1-128 characters of [A-Za-z0-9._-]", "step_id")
    return TrainStep(expected, [parse_sample(s, f"samples.{i}") for i, s in enumerate(samples)], step_id)


def parse_publish(body: object) -> Publish:
    b = _obj(body)
    version = _version(b, "version")
    name = b.get("adapter_name")
    if name is not None and (not isinstance(name, str) or not ADAPTER_NAME.match(name)):
        raise invalid("adapter_name must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}", "adapter_name")
    load_into = b.get("load_into", [])
    if not isinstance(load_into, list) or not all(isinstance(u, str) and re.match(r"^https?://", u) for u in load_into):
        raise invalid("load_into must be an array of http(s) URLs", "load_into")
    return Publish(version, name, list(load_into))


def parse_save(body: object) -> str:
    return _dir(body)


def parse_load(body: object) -> str:
    return _dir(body)
