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
from urllib.parse import urljoin, urlsplit

from app.core.hub.source import HubAccess, redacted
from app.core.problem import error_detail
from app.core.text import T, Text

logger = logging.getLogger(__name__)

GITHUB_API = "https://api.github.com"
API_VERSION = "2022-11-28"
MAX_ANSWER_BYTES = 8 << 20  # a release's listing is tens of kB (its notes and ~40 assets); never read without end
# the whole answer must arrive within this (each read may wait READ_TIMEOUT_S besides): a server that drips a byte now
# and then never reaches the per-read limit, so without it the user would wait as long as the server likes
ANSWER_DEADLINE_S = 30.0
MAX_ASSET_BYTES = 64 << 30  # an asset listed as larger is not a llama.cpp archive (the largest are ~1 GB)
MAX_REDIRECTS = 5
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
        if item["name"] in assets:
            raise ValueError(f"the release lists {shown_name(item['name'])} twice")
        size = item.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"the asset {shown_name(item['name'])} has no size")
        if size > MAX_ASSET_BYTES:
            raise ValueError(f"the asset {shown_name(item['name'])} is listed as larger than a release file can be")
        digest = item.get("digest")
        digest = digest if isinstance(digest, str) else None
        match = _SHA256.fullmatch(digest) if digest else None
        url = item.get("browser_download_url")
        assets[item["name"]] = PublishedAsset(item["name"], size, match.group(1) if match else None, digest,
                                              url if isinstance(url, str) else None)
    tag = data.get("tag_name")
    return ReleaseListing(api_url, tag if isinstance(tag, str) else "", assets)


def shown_name(name: str, limit: int = 120) -> str:
    """A name a server or an archive chose, fit for a sentence: control characters escaped, cut to ``limit``."""
    escaped = "".join(char if char.isprintable() else ascii(char)[1:-1] for char in name)
    return escaped if len(escaped) <= limit else escaped[:limit] + "…"


def read_release(api_url: str, access: HubAccess, *, deadline_s: float = ANSWER_DEADLINE_S) -> ReleaseListing:
    """GitHub's listing of one release (``api_url``: ReleaseSource.api_url), through the app's HTTP client with
    ``access``'s proxy and time limits; ListingUnavailable, with the clause that says why, when it cannot be read.
    A redirect is followed only to the same scheme and host (never to another host, to plain HTTP or to a file),
    and the whole answer must arrive within ``deadline_s``."""
    status, headers, body = _fetch(api_url, access, time.monotonic() + deadline_s, deadline_s)
    if status != 200:
        raise _refused(api_url, status, headers)
    return _parsed(body, api_url)


def _fetch(api_url: str, access: HubAccess, deadline: float, deadline_s: float) -> tuple[int, Any, bytes]:
    import httpx2

    from app.core.hub.http import client, timeout

    url = api_url
    try:
        for _ in range(MAX_REDIRECTS + 1):
            if time.monotonic() > deadline:  # redirects each wait for a connection: the deadline covers them all
                raise _too_slow(api_url, deadline_s, 0)
            with client(access).stream("GET", url, headers=_headers(), timeout=timeout(access),
                                       follow_redirects=False) as response:
                if not response.is_redirect:
                    return response.status_code, response.headers, _body(response, api_url, deadline, deadline_s)
                url = _redirect_target(api_url, url, response.headers.get("location") or "")
        raise ListingUnavailable(T("{host} sent the request on more than {count} times",
                                   "{host} 将请求转发了超过 {count} 次", host=_host(api_url), count=MAX_REDIRECTS),
                                 _retry_step(), (f"url: {api_url}",))
    except ListingUnavailable:
        raise
    except (httpx2.ReadTimeout, httpx2.WriteTimeout, httpx2.PoolTimeout) as error:
        logger.info("release listing %s: %r", api_url, error)
        raise ListingUnavailable(T("{host} did not answer within {s:g} s", "{host} 在 {s:g} 秒内没有应答",
                                   host=_host(api_url), s=access.read_timeout_s), _retry_step()) from error
    except httpx2.RemoteProtocolError as error:  # it answered, then broke off (or its answer is not HTTP)
        logger.info("release listing %s: %r", api_url, error)
        raise ListingUnavailable(T("{host} broke off its answer", "{host} 的应答中途断开", host=_host(api_url)),
                                 _retry_step(), (f"url: {api_url}", error_detail(error))) from error
    except httpx2.HTTPError as error:
        logger.info("release listing %s: %r", api_url, error)
        raise _unreachable(api_url, access, error) from error
    except Exception as error:  # the proxy client refused the address (HubError) or another client failure
        logger.info("release listing %s: %r", api_url, error)
        message = getattr(error, "message", None)
        why = message if isinstance(message, Text) else T("{detail}", "{detail}", detail=error_detail(error))
        raise ListingUnavailable(why, _retry_step()) from error


def _redirect_target(api_url: str, url: str, location: str) -> str:
    """The address a redirect names, when it keeps the scheme and host of ``api_url``; else ListingUnavailable (a
    listing read elsewhere, or over plain HTTP, could carry any digest)."""
    target = urljoin(url, location)
    first, then = urlsplit(api_url), urlsplit(target)
    if (then.scheme, then.hostname, then.port) == (first.scheme, first.hostname, first.port):
        return target
    shown = f"{then.scheme}://{then.hostname or ''}" + (f":{then.port}" if then.port else "")
    raise ListingUnavailable(T("{host} sent the request on to {target}, another address, which the app does not "
                               "read digests from", "{host} 将请求转发到另一个地址 {target}，应用不会从那里读取摘要",
                               host=_host(api_url), target=shown), _retry_step(),
                             (f"url: {api_url}", f"redirected to: {shown}"))


def _parsed(body: bytes, api_url: str) -> ReleaseListing:
    import json

    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:  # not JSON, not UTF-8, nested deeper than Python's parser goes
        logger.info("release listing %s is not JSON: %s", api_url, type(error).__name__)
        raise _not_a_listing(api_url, T("it is not JSON", "它不是 JSON")) from None
    try:
        return parse_release(data, api_url)
    except ValueError as error:
        raise _not_a_listing(api_url, T("{detail}", "{detail}", detail=str(error))) from error


def _not_a_listing(api_url: str, detail: Text) -> ListingUnavailable:
    return ListingUnavailable(T("the answer of {host} is not a release listing: {detail}",
                                "{host} 的应答不是发布信息：{detail_zh}", host=_host(api_url),
                                detail=detail.render("en"), detail_zh=detail.render("zh")),
                              _retry_step(), (f"url: {api_url}",))


def _headers() -> dict[str, str]:
    from app import __version__

    return {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"gguf-launcher/{__version__}"}


def _body(response: Any, api_url: str, deadline: float, deadline_s: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        if time.monotonic() > deadline:
            raise _too_slow(api_url, deadline_s, size)
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise ListingUnavailable(T("the answer of {host} is larger than a release listing can be",
                                       "{host} 的应答超出了发布信息可能的大小", host=_host(api_url)), _retry_step())
        chunks.append(chunk)
    return b"".join(chunks)


def _too_slow(api_url: str, deadline_s: float, size: int) -> ListingUnavailable:
    return ListingUnavailable(T("{host} did not send its whole answer within {s:g} s",
                                "{host} 没有在 {s:g} 秒内发完应答", host=_host(api_url), s=deadline_s), _retry_step(),
                              (f"url: {api_url}", f"received: {size} bytes"))


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
