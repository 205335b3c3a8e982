"""Tells vLLM servers about published weights, standard library only.

LoRA: `POST /v1/load_lora_adapter`. Full weights: vLLM started with `VLLM_SERVER_DEV_MODE=1` from the
publish directory's `current` link reloads them with `POST /collective_rpc {"method": "reload_weights"}`,
then drops its prefix cache (`POST /reset_prefix_cache`), whose KV entries the old weights computed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request


def _post(url: str, body: dict, timeout_s: float) -> tuple[int, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as res:
            return res.status, res.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def load_lora_adapter(base_url: str, name: str, path: str, timeout_s: float = 300.0) -> None:
    """Loads (or, if the name is taken, replaces) the adapter; raises RuntimeError on failure."""
    base = base_url.rstrip("/")
    status, text = _post(f"{base}/v1/load_lora_adapter", {"lora_name": name, "lora_path": path}, timeout_s)
    if status == 400 and "already" in text.lower():
        _post(f"{base}/v1/unload_lora_adapter", {"lora_name": name}, timeout_s)
        status, text = _post(f"{base}/v1/load_lora_adapter", {"lora_name": name, "lora_path": path}, timeout_s)
    if status != 200:
        raise RuntimeError(f"{base}: load_lora_adapter answered {status}: {text[:300]}")


def reload_weights(base_url: str, path: str, timeout_s: float = 600.0) -> None:
    """Full weights: the replica reloads from the folder it was started from (`current` now points at `path`)."""
    base = base_url.rstrip("/")
    status, text = _post(f"{base}/collective_rpc", {"method": "reload_weights"}, timeout_s)
    if status == 404:
        raise RuntimeError(f"{base}: no /collective_rpc (start vLLM with VLLM_SERVER_DEV_MODE=1 to reload {path})")
    if status != 200:
        raise RuntimeError(f"{base}: reload_weights answered {status}: {text[:300]}")
    status, text = _post(f"{base}/reset_prefix_cache", {}, timeout_s)
    if status != 200:
        raise RuntimeError(f"{base}: reset_prefix_cache answered {status}: {text[:300]}")
