"""Probe results remembered under the cache dir, keyed on everything that changes the answer.

Key: model identity (path, size, mtime), backend build, GPU UUIDs and driver, ctx, cache types,
parallel, batch/ubatch, flash attention, load mode, budgets, margins and child limits. A changed
key is a different file; files are written atomically, so a crash never leaves a half result.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from typing import TYPE_CHECKING, Any

from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.paths import cache_dir

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from app.core.probe.result import ProbeResult

CACHE_VERSION = 2  # 2: RAM judged with the context full (results judged on the test prompt alone are stale)


def model_identity(path: str) -> dict[str, Any]:
    stat = os.stat(path)
    return {"path": os.path.abspath(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def gpu_identity(hw: Any) -> list[dict[str, Any]]:
    return [{"uuid": g.uuid, "name": g.name, "driver": g.driver_version, "total": g.vram_total_bytes}
            for g in (getattr(hw, "gpus", None) or ())]


def probe_key(info: Any, config: Any, backend: Any, hw: Any, **extra: Any) -> dict[str, Any]:
    """Everything the probe's answer depends on; ``extra`` adds budgets, margins and limits."""
    return {
        "version": CACHE_VERSION,
        "model": model_identity(str(info.path)),
        "backend": {"kind": backend.kind, "version": backend.version_text, "build": backend.build_number,
                    "path": getattr(backend, "path", None), "compiled": list(backend.compiled_backends)},
        "gpus": gpu_identity(hw),
        "config": {name: getattr(config, name) for name in (
            "ctx", "parallel", "batch", "ubatch", "cache_type_k", "cache_type_v", "flash_attn", "load_mode",
            "threads")},
        "extra_args": list(config.extra_args),
        **{name: value for name, value in sorted(extra.items())},
    }


def key_digest(key: dict[str, Any]) -> str:
    canonical = json.dumps(key, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def _path(key: dict[str, Any]):
    return cache_dir() / "probe" / f"{key_digest(key)}.json"


def load_cached(key: dict[str, Any]) -> dict[str, Any] | None:
    """The stored result for exactly this key, or None (missing, unreadable or for another key)."""
    try:
        stored = read_json(_path(key))
    except FileNotFoundError:
        return None  # not measured yet
    except (OSError, ValueError):  # unreadable or half-written: measured again
        logger.warning("probe cache entry unreadable; measuring again", exc_info=True)
        return None
    expected = json.loads(json.dumps(key, default=str))
    if not isinstance(stored, dict) or stored.get("key") != expected:
        return None
    result = stored.get("result")
    return result if isinstance(result, dict) else None


def store(key: dict[str, Any], result: dict[str, Any]) -> None:
    write_json_atomic(_path(key), {"key": json.loads(json.dumps(key, default=str)), "result": result})


def save_result(key: dict[str, Any], result: ProbeResult) -> None:
    """Remember a fresh result under ``key``, stamping ``result.saved_at`` (shown later as "last measured on")."""
    result.saved_at = time.time()
    store(key, result.to_cache())
