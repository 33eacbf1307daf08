"""Ask a server who it is and how large its context really is, instead of assuming.

What each kind answers (looked up in their docs and trackers, 2026-12):
- llama-server: ``GET /props`` -> ``default_generation_settings.n_ctx`` is one slot's context (llama.cpp PR #5307
  added it so that clients need not guess); ``total_slots``. In router mode a bare ``/props`` carries a placeholder
  ``n_ctx: 0``, so 0 means "not said". ``GET /slots`` lists each slot's ``n_ctx``; newer builds also put
  ``meta.n_ctx`` into ``/v1/models`` (``meta.n_ctx_train`` is the model's maximum, not what was allocated).
  With ``--api-key`` every route but ``/health`` and the model list wants the key.
- LM Studio: ``GET /api/v0/models`` (0.3.6+) lists ``state`` ("loaded"), ``max_context_length`` (the model's
  maximum) and, for a loaded model, ``loaded_context_length`` (what it runs with). Its OpenAI ``/v1/models`` has ids
  only. Unknown routes answer 200 with an ``error`` text, so a kind is recognised by its fields, never by a status.
- Ollama: ``GET /api/version``; ``GET /api/ps`` lists loaded models with ``context_length`` (what the runner holds,
  e.g. 4096 while the GGUF says 40960); ``POST /api/show {"model"}`` has ``parameters`` as text lines
  ("num_ctx 2048") and ``model_info["<arch>.context_length"]`` (the trained maximum). Ollama cuts a longer prompt
  without an error, which is why an unknown context is guarded low (``UNKNOWN_CTX_GUARD``).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.core.chat import errors
from app.core.chat.classify import ServerLoading, classify_http
from app.core.chat.client import new_request_id
from app.core.problem import UserError
from app.core.remote import server as rs
from app.core.text import T

logger = logging.getLogger(__name__)

_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.M)


def normalize_url(text: str) -> str:
    """``host:8080``, ``http://host:8080/v1/`` -> ``http://host:8080``; a UserError for what is no web address."""
    text = text.strip()
    if text and "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # a port that is no number, an unclosed [IPv6 bracket
        parts, port_ok = urlsplit(""), False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok or any(c.isspace() for c in text):
        raise UserError(T("{text} is not a server address.", "{text} 不是服务器地址。", text=text or "-"),
                        T("Enter it like http://192.168.1.20:8080 (the address the server shows).",
                          "请按 http://192.168.1.20:8080 这样的格式输入（即服务器显示的地址）。"))
    url = text.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


class _Asker:
    """GETs and POSTs for detection, failing in the chat's own words (unreachable, wants a key, refused it)."""

    def __init__(self, url: str, api_key: str | None, timeout_s: float):
        self.url, self.api_key = url, api_key
        self.http = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(5.0, timeout_s)))

    def ask(self, method: str, path: str, body: dict | None = None, *, required: bool = False) -> Any:
        """The JSON answer, or None when this route is not there (404, not JSON); raises for a refusal."""
        request_id = new_request_id()
        headers = {"X-Request-Id": request_id}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            reply = self.http.request(method, self.url + path, json=body, headers=headers)
        except httpx.TimeoutException:
            raise errors.unreachable(request_id, self.url, (f"{method} {path}: no answer in time",)) from None
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            raise errors.unreachable(request_id, self.url, (f"{type(exc).__name__}: {exc}",)) from None
        if reply.status_code in (401, 403, 503) or (required and reply.status_code != 200):
            raise classify_http(reply.status_code, reply.content, request_id, url=self.url,
                                key_given=bool(self.api_key))
        if reply.status_code != 200:
            logger.debug("%s %s: HTTP %s", method, path, reply.status_code)
            return None
        try:
            return reply.json()
        except ValueError:
            return None

    def close(self) -> None:
        self.http.close()


def connect(url: str, api_key: str | None = None, *, timeout_s: float = 10.0, wait_loading_s: float = 0.0,
            sleep: Callable[[float], None] = time.sleep) -> rs.RemoteServer:
    """Who answers at ``url``, its models and its real context. Raises ChatError (unreachable, ``auth``: wants a
    key / refused this key, ``loading`` once ``wait_loading_s`` has passed) or UserError (not an address)."""
    url = normalize_url(url)
    api_key = (api_key or "").strip() or None
    waited, delay = 0.0, 0.25
    while True:
        try:
            remote = _ask_all(url, api_key, timeout_s)
            break
        except ServerLoading as loading:  # HTTP 503 while the model loads: wait as a chat does, within a bound
            if waited >= wait_loading_s:
                raise errors.loading(loading.request_id, waited, (loading.raw,)) from None
            sleep(delay)
            waited, delay = waited + delay, min(delay * 2, 2.0)
    logger.info("remote server %s: %s, ctx %s (%s), %d model(s)", url, remote.kind, remote.ctx, remote.ctx_source,
                len(remote.models))
    return remote


def _ask_all(url: str, api_key: str | None, timeout_s: float) -> rs.RemoteServer:
    asker = _Asker(url, api_key, timeout_s)
    try:
        listing = asker.ask("GET", "/v1/models", required=True)
        models = _model_ids(listing)
        return (_llama_server(asker, listing, models) or _lm_studio(asker, models) or _ollama(asker, models)
                or rs.RemoteServer(url, api_key, rs.GENERIC, models=models, model=models[0] if models else None))
    finally:
        asker.close()


def _model_ids(listing: Any) -> tuple[str, ...]:
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        raise errors.malformed(None, "the model list (/v1/models) has no data")
    return tuple(str(item["id"]) for item in data if isinstance(item, dict) and item.get("id"))


def _positive(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _llama_server(asker: _Asker, listing: dict, models: tuple[str, ...]) -> rs.RemoteServer | None:
    props = asker.ask("GET", "/props")
    if not isinstance(props, dict) or "default_generation_settings" not in props:
        return None
    settings = props.get("default_generation_settings") or {}
    ctx, source = _positive(settings.get("n_ctx")), rs.FROM_PROPS
    meta = next((item.get("meta") for item in listing.get("data", []) if isinstance(item, dict)), None) or {}
    if ctx is None:
        ctx, source = _positive(meta.get("n_ctx")), rs.FROM_MODELS_META
    if ctx is None:
        slots = asker.ask("GET", "/slots")
        ctx, source = (_positive(slots[0].get("n_ctx")) if isinstance(slots, list) and slots
                       and isinstance(slots[0], dict) else None), rs.FROM_SLOTS
    return rs.RemoteServer(asker.url, asker.api_key, rs.LLAMA_SERVER, ctx, source if ctx else None,
                           _positive(meta.get("n_ctx_train")), models, models[0] if models else None,
                           _positive(props.get("total_slots")) or 1)


def _lm_studio(asker: _Asker, models: tuple[str, ...]) -> rs.RemoteServer | None:
    listing = asker.ask("GET", "/api/v0/models")
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list) or not any(isinstance(m, dict) and "state" in m for m in data):
        return None
    loaded = [m for m in data if isinstance(m, dict) and m.get("state") == "loaded" and m.get("type") != "embeddings"]
    chosen = loaded[0] if loaded else None
    ctx = _positive(chosen.get("loaded_context_length")) if chosen else None
    model = str(chosen["id"]) if chosen and chosen.get("id") else (models[0] if models else None)
    trained = _positive(chosen.get("max_context_length")) if chosen else None
    return rs.RemoteServer(asker.url, asker.api_key, rs.LM_STUDIO, ctx, rs.FROM_LM_STUDIO if ctx else None,
                           trained, models, model)


def _ollama(asker: _Asker, models: tuple[str, ...]) -> rs.RemoteServer | None:
    version = asker.ask("GET", "/api/version")
    if not isinstance(version, dict) or "version" not in version:
        return None
    running = asker.ask("GET", "/api/ps")
    loaded = [m for m in (running or {}).get("models", []) if isinstance(m, dict)] if isinstance(running, dict) else []
    model = str(loaded[0].get("model") or loaded[0].get("name")) if loaded else (models[0] if models else None)
    ctx, source = (_positive(loaded[0].get("context_length")) if loaded else None), rs.FROM_OLLAMA_PS
    trained = None
    if model:
        shown = asker.ask("POST", "/api/show", {"model": model})
        if isinstance(shown, dict):
            trained = next((_positive(v) for k, v in (shown.get("model_info") or {}).items()
                            if k.endswith(".context_length")), None)
            if ctx is None:
                match = _NUM_CTX.search(str(shown.get("parameters") or ""))
                ctx, source = (int(match.group(1)) if match else None), rs.FROM_OLLAMA_NUM_CTX
    return rs.RemoteServer(asker.url, asker.api_key, rs.OLLAMA, ctx, source if ctx else None, trained, models, model)
