"""Where models come from: Hugging Face, its mirror hf-mirror.com (the same API at another address), ModelScope."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit, urlunsplit

from app.core.text import T, Text

HUGGINGFACE_URL = "https://huggingface.co"
HF_MIRROR_URL = "https://hf-mirror.com"
MODELSCOPE_URL = "https://www.modelscope.cn"  # the ModelScope SDK's DEFAULT_MODELSCOPE_DATA_ENDPOINT (hub/constants.py)
CONNECT_TIMEOUT_S = 5.0  # "cannot be reached within a few seconds"
READ_TIMEOUT_S = 15.0


class HubSource(StrEnum):
    HUGGINGFACE = "hf"
    HF_MIRROR = "hf-mirror"
    MODELSCOPE = "modelscope"

    def label(self) -> Text:
        return {HubSource.HUGGINGFACE: T("Hugging Face", "Hugging Face"),
                HubSource.HF_MIRROR: T("the mirror hf-mirror.com", "镜像站 hf-mirror.com"),
                HubSource.MODELSCOPE: T("ModelScope", "魔搭社区（ModelScope）")}[self]

    def default_endpoint(self) -> str:
        """The address of its API; Hugging Face honours ``HF_ENDPOINT`` as huggingface_hub does, ModelScope its SDK's
        ``MODELSCOPE_DOMAIN`` (a host name, https; hub/utils/utils.py get_domain/get_endpoint)."""
        if self is HubSource.HUGGINGFACE:
            return (os.environ.get("HF_ENDPOINT") or HUGGINGFACE_URL).rstrip("/")
        if self is HubSource.HF_MIRROR:
            return HF_MIRROR_URL
        domain = (os.environ.get("MODELSCOPE_DOMAIN") or "").strip().strip("/")
        if domain:
            return domain if domain.startswith(("http://", "https://")) else f"https://{domain}"
        return MODELSCOPE_URL


@dataclass(frozen=True)
class HubAccess:
    """How to reach one source: its address (``endpoint`` overrides the source's own, e.g. a test server), the
    user's token for this source (None: none is sent, not even one saved by other tools, so a mirror never sees it),
    the time allowed to connect and to wait for an answer, and a proxy of the user's own."""

    source: HubSource = HubSource.HUGGINGFACE
    endpoint: str | None = None
    token: str | None = field(default=None, repr=False)  # never in a log line
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    read_timeout_s: float = READ_TIMEOUT_S
    # every request through this proxy (None: the system's, from HTTP(S)_PROXY); may hold a password: not in repr
    proxy: str | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return self.endpoint.rstrip("/") if self.endpoint else self.source.default_endpoint()

    @property
    def token_arg(self) -> str | bool:
        """What huggingface_hub's ``token=`` gets: the user's token, or False (never the implicit saved one)."""
        return self.token or False


def is_repo_id(text: str) -> bool:
    """"owner/name": what the user typed may be a repository itself rather than search words."""
    parts = text.strip().split("/")
    return len(parts) == 2 and all(parts) and not any(c.isspace() for c in text.strip())


def redacted(proxy: str) -> str:
    """The proxy's address without a user name or password (what a sentence or a log line may show)."""
    parts = urlsplit(proxy)
    if parts.username is None and parts.password is None:
        return proxy
    host = parts.hostname or ""
    return urlunsplit((parts.scheme, f"{host}:{parts.port}" if parts.port else host, parts.path, "", ""))
