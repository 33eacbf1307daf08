"""The HTTP client and headers for one source's requests: huggingface_hub's shared session (its redirects, the
system's proxy from HTTP(S)_PROXY as httpx reads it), or, when the user set a proxy of their own, one client per
proxy address that sends every request through it."""

from __future__ import annotations

import logging
import threading
import uuid
from typing import Any
from urllib.parse import urlsplit

from app.core.hub.errors import HubError, HubFault
from app.core.hub.source import HubAccess, HubSource, redacted
from app.core.text import T

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()
_PROXIED: dict[str, Any] = {}  # proxy URL -> httpx2.Client


def timeout(access: HubAccess) -> Any:
    import httpx2

    return httpx2.Timeout(access.read_timeout_s, connect=access.connect_timeout_s)


def client(access: HubAccess) -> Any:
    """The httpx2.Client for ``access``: huggingface_hub's session, or a client through ``access.proxy``."""
    from huggingface_hub.utils import get_session

    if not access.proxy:
        return get_session()
    import httpx2

    _check_address(access.proxy)
    with _LOCK:
        found = _PROXIED.get(access.proxy)
        if found is None:
            try:
                found = httpx2.Client(proxy=access.proxy, follow_redirects=True, timeout=None)
            except (ValueError, TypeError, ImportError, httpx2.InvalidURL) as error:  # ImportError: socks
                logger.info("proxy %s refused: %s", redacted(access.proxy), type(error).__name__)
                raise bad_proxy(access.proxy) from None
            _PROXIED[access.proxy] = found
        return found


def _check_address(proxy: str) -> None:
    """An http(s) address with a host and a port in range; httpx accepts "http://" and "http://h:99999"."""
    parts = urlsplit(proxy)
    try:
        port = parts.port  # ValueError outside 0-65535
    except ValueError:
        raise bad_proxy(proxy) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise bad_proxy(proxy)


def bad_proxy(proxy: str) -> HubError:
    return HubError(T("The proxy address {proxy} cannot be used: it must look like http://host:port.",
                      "代理地址 {proxy} 无法使用：它应形如 http://host:port。", proxy=redacted(proxy)),
                    T("Correct the proxy address, or clear it to use the system's.",
                      "请更正代理地址，或清空它以使用系统代理。"), kind=HubFault.PROXY)


def close_proxied() -> None:
    """Close the proxy clients (their pooled connections); the next request opens a new one."""
    with _LOCK:
        clients = list(_PROXIED.values())
        _PROXIED.clear()
    for found in clients:
        found.close()


def request_headers(access: HubAccess) -> dict[str, str]:
    """Headers for a request to ``access``'s source: huggingface_hub's (user agent, the user's token only) for the
    Hub and its mirror, ModelScope's own (its token as the SDK's cookie) for ModelScope."""
    if access.source is HubSource.MODELSCOPE:
        return modelscope_headers(access)
    from huggingface_hub.utils import build_hf_headers

    return build_hf_headers(token=access.token_arg)


def modelscope_headers(access: HubAccess) -> dict[str, str]:
    """What every request to ModelScope carries: our user agent, a request id (as the SDK sends X-Request-ID) and
    the user's ModelScope token as the SDK's session cookie (never a Hugging Face token: the access is ModelScope's)."""
    from app import __version__

    result = {"user-agent": f"gguf-launcher/{__version__}", "X-Request-ID": uuid.uuid4().hex}
    if access.token:
        result["Cookie"] = f"m_session_id={access.token}"
    return result
