"""What GitHub publishes about one release of a repository: its assets' names, sizes and SHA-256 digests.

GitHub computes a SHA-256 of every release asset when it is uploaded and gives it in the REST API's asset object as
``"digest": "sha256:<hex>"`` (GitHub changelog 2025-06-03, "Releases now expose digests for release assets",
https://github.blog/changelog/2025-06-03-releases-now-expose-digests-for-release-assets/, cited by google/go-github
#3628; github/roadmap#1136: "generated at the time of asset upload and are immutable"); an asset uploaded before
that may have ``"digest": null``. The request is "Get a release by tag name",
``GET /repos/{owner}/{repo}/releases/tags/{tag}`` (docs.github.com/en/rest/releases/releases), with the headers the
docs recommend (``Accept: application/vnd.github+json``, ``X-GitHub-Api-Version: 2022-11-28``), no token: GitHub
allows 60 such requests an hour from one address, and past that answers 403 or 429 with ``x-ratelimit-remaining:
0`` and the time it resets in ``x-ratelimit-reset`` (docs.github.com/en/rest/using-the-rest-api/
rate-limits-for-the-rest-api).

The request goes through the app's HTTP client (app/core/hub/http.py: the system's proxy, or the user's own), so it
reaches GitHub the way model downloads reach the Hub. Used by app/core/hub/engine_fetch.py (the digests an archive
is checked against when the app holds none) and scripts/pin_llama_release.py.
"""

from __future__ import annotations

import difflib
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from app.core.hub.source import HubAccess, redacted
from app.core.problem import error_detail
from app.core.text import T, Text

logger = logging.getLogger(__name__)

GITHUB_API = "https://api.github.com"
API_VERSION = "2022-11-28"
MAX_ANSWER_BYTES = 8 << 20  # a release's listing is tens of kB (its notes and ~40 assets); never read without end
_SHA256 = re.compile(r"sha256:([0-9a-f]{64})")


@dataclass(frozen=True)
class PublishedAsset:
    """One asset as the release lists it: its name, size in bytes, the SHA-256 GitHub computed (None when it gives
    none, or a digest of another kind, kept in ``digest`` as written) and its download address."""

    name: str
    size: int
    sha256: str | None
    digest: str | None
    url: str | None


@dataclass(frozen=True)
class ReleaseListing:
    """The release's tag, the address it was read from, and its assets by name."""

    api_url: str
    tag: str
    assets: Mapping[str, PublishedAsset]

    def look_alike(self, name: str, limit: int = 3) -> list[str]:
        """Names of the release that look like ``name``: first those that differ only in numbers (a CUDA version
        moved on: ``cuda-12.4`` -> ``cuda-12.8``), then close spellings; none when nothing is close."""
        shape = _shape(name)
        same_shape = sorted(other for other in self.assets if other != name and _shape(other) == shape)
        close = difflib.get_close_matches(name, [other for other in self.assets if other != name], n=limit,
                                          cutoff=0.9)
        return list(dict.fromkeys([*same_shape, *close]))[:limit]


class ListingUnavailable(Exception):
    """The listing could not be read: ``why`` is a clause for a sentence ("api.github.com could not be reached
    within 5 s (...)"), ``step`` what to do, ``evidence`` what was seen."""

    def __init__(self, why: Text, step: Text, evidence: tuple[str, ...] = ()) -> None:
        super().__init__(why.render("en"))
        self.why = why
        self.step = step
        self.evidence = evidence


def parse_release(data: Any, api_url: str) -> ReleaseListing:
    """The listing in a "Get a release" answer; ValueError when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("assets"), list):
        raise ValueError("the answer is not a release: it has no list of assets")
    assets: dict[str, PublishedAsset] = {}
    for item in data["assets"]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError("an asset of the release has no name")
        size = item.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"the asset {item['name']} has no size")
        digest = item.get("digest")
        digest = digest if isinstance(digest, str) else None
        match = _SHA256.fullmatch(digest) if digest else None
        url = item.get("browser_download_url")
        assets[item["name"]] = PublishedAsset(item["name"], size, match.group(1) if match else None, digest,
                                              url if isinstance(url, str) else None)
    tag = data.get("tag_name")
    return ReleaseListing(api_url, tag if isinstance(tag, str) else "", assets)


def read_release(api_url: str, access: HubAccess) -> ReleaseListing:
    """GitHub's listing of one release (``api_url``: ReleaseSource.api_url), through the app's HTTP client with
    ``access``'s proxy and time limits; ListingUnavailable, with the clause that says why, when it cannot be read."""
    import httpx2

    from app.core.hub.http import client, timeout

    try:
        with client(access).stream("GET", api_url, headers=_headers(), timeout=timeout(access)) as response:
            body = _body(response, api_url)
            status, headers = response.status_code, response.headers
    except ListingUnavailable:
        raise
    except (httpx2.ReadTimeout, httpx2.WriteTimeout, httpx2.PoolTimeout) as error:
        logger.info("release listing %s: %r", api_url, error)
        raise ListingUnavailable(T("{host} did not answer within {s:g} s", "{host} 在 {s:g} 秒内没有应答",
                                   host=_host(api_url), s=access.read_timeout_s), _retry_step()) from error
    except httpx2.HTTPError as error:
        logger.info("release listing %s: %r", api_url, error)
        raise _unreachable(api_url, access, error) from error
    except Exception as error:  # the proxy client refused the address (HubError) or another client failure
        logger.info("release listing %s: %r", api_url, error)
        message = getattr(error, "message", None)
        why = message if isinstance(message, Text) else T("{detail}", "{detail}", detail=error_detail(error))
        raise ListingUnavailable(why, _retry_step()) from error
    if status != 200:
        raise _refused(api_url, status, headers)
    try:
        import json

        return parse_release(json.loads(body), api_url)
    except ValueError as error:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ListingUnavailable(T("the answer of {host} is not a release listing: {detail}",
                                   "{host} 的应答不是发布信息：{detail}", host=_host(api_url), detail=str(error)),
                                 _retry_step(), (f"url: {api_url}",)) from error


def _headers() -> dict[str, str]:
    from app import __version__

    return {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"gguf-launcher/{__version__}"}


def _body(response: Any, api_url: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise ListingUnavailable(T("the answer of {host} is larger than a release listing can be",
                                       "{host} 的应答超出了发布信息可能的大小", host=_host(api_url)), _retry_step())
        chunks.append(chunk)
    return b"".join(chunks)


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def _retry_step() -> Text:
    return T("Check the internet connection, then try again.", "请检查网络连接，然后重试。")


def _unreachable(api_url: str, access: HubAccess, error: Exception) -> ListingUnavailable:
    detail = error_detail(error)
    if access.proxy:
        return ListingUnavailable(T("the proxy {proxy} could not be used to reach {host}: {detail}",
                                    "无法通过代理 {proxy} 连接 {host}：{detail}", proxy=redacted(access.proxy),
                                    host=_host(api_url), detail=detail),
                                  T("Check that the proxy program runs and its address is right, or clear the proxy "
                                    "to use the system's.",
                                    "请确认代理程序正在运行且地址正确，或清空代理以使用系统代理。"))
    return ListingUnavailable(T("{host} could not be reached: {detail}", "无法连接 {host}：{detail}",
                                host=_host(api_url), detail=detail), _retry_step())


def _refused(api_url: str, status: int, headers: Any) -> ListingUnavailable:
    evidence = (f"url: {api_url}", f"status: {status}",
                *(f"{name}: {headers.get(name)}" for name in ("x-ratelimit-limit", "x-ratelimit-remaining",
                                                              "x-ratelimit-reset") if headers.get(name)))
    if status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
        limit = headers.get("x-ratelimit-limit") or "?"
        return ListingUnavailable(T("GitHub has answered as many requests from this address as it allows in an hour "
                                    "({limit}) and asks to wait ({status})",
                                    "GitHub 已达到对这个地址每小时允许的请求次数（{limit}），要求稍后再试（{status}）",
                                    limit=limit, status=status), _wait_step(headers.get("x-ratelimit-reset")),
                                  evidence)
    if status == 404:
        return ListingUnavailable(T("GitHub answered that there is no such release ({status})",
                                    "GitHub 回答没有这个发布版本（{status}）", status=status),
                                  T("Update the app: this one was made for a release GitHub no longer lists.",
                                    "请更新应用：本应用所对应的发布版本已不在 GitHub 上列出。"), evidence)
    return ListingUnavailable(T("{host} answered with an error ({status})", "{host} 返回了错误（{status}）",
                                host=_host(api_url), status=status),
                              T("Try again later.", "请稍后重试。"), evidence)


def _wait_step(reset: str | None) -> Text:
    if reset and reset.isdigit():
        minutes = max(1, round((int(reset) - time.time()) / 60))
        return T("Try again in {minutes} min.", "请在 {minutes} 分钟后重试。", minutes=minutes)
    return T("Try again in an hour.", "请一小时后重试。")


def _shape(name: str) -> str:
    return re.sub(r"\d+", "#", name)
