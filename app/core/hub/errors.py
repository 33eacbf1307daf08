"""Every way a Hub request fails, as one sentence and a next step (the app's one problem shape, a UserError)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from app.core.hub.source import HubAccess, HubSource, redacted
from app.core.problem import UserError, error_detail
from app.core.text import T, Text

logger = logging.getLogger(__name__)


class HubFault(StrEnum):
    GATED = "gated"  # 401/403: gated or private, needs the license accepted and a token
    NOT_FOUND = "not_found"  # 404: no such repository or file
    RATE_LIMITED = "rate_limited"  # 429: asked to wait (retry_after_s)
    UNREACHABLE = "unreachable"  # no connection or no answer within the time allowed
    PROXY = "proxy"  # the user's proxy: an address that cannot be used, or nothing answering there
    SERVER = "server"  # any other answer that is not a success
    NOT_SUPPORTED = "not_supported"  # a search the source does not offer (ModelScope by words)
    BAD_ANSWER = "bad_answer"  # an answer that is not what the Hub's API returns


@dataclass
class HubError(UserError):
    kind: HubFault = HubFault.SERVER
    retry_after_s: int | None = None
    status: int | None = None


def where_text(access: HubAccess) -> Text:
    return access.source.label() if access.endpoint is None else T("{url}", "{url}", url=access.url or "")


def not_supported(source: HubSource) -> HubError:
    """Search by words where the source's API offers none (ModelScope: its SDK lists an owner's models, or one
    repository, but has no search by text)."""
    return HubError(T("{source} cannot be searched by words here; the app can list one of its repositories by its "
                      "name (owner/name).",
                      "无法在{source_zh}中按关键词搜索；应用只能按名称（owner/name）列出其中的某个仓库。",
                      source=source.label().render("en"), source_zh=source.label().render("zh")),
                    T("Type the repository's name as owner/name, as its page shows it, or choose Hugging Face or "
                      "its mirror hf-mirror.com to search by words.",
                      "请按模型页面上显示的 owner/name 输入仓库名称，或选择 Hugging Face 或其镜像站 hf-mirror.com "
                      "按关键词搜索。"), kind=HubFault.NOT_SUPPORTED)


def _named(source: HubSource | None, capital: bool = False) -> tuple[str, str]:
    """(English, Chinese) name of who answered: "the Hub" (Hugging Face or its mirror), or ModelScope."""
    if source is HubSource.MODELSCOPE:
        return source.label().render("en"), source.label().render("zh")
    return ("The Hub" if capital else "the Hub"), "Hub"


def gated(what: str, status: int, source: HubSource | None = None) -> HubError:
    hub, hub_zh = _named(source)
    return HubError(T("{what} is gated or private: only a signed-in account that accepted its license may read it "
                      "({hub} answered {status}).",
                      "{what} 是受限或私有的：只有接受了其许可协议并已登录的账号才能读取（{hub_zh} 返回 {status}）。",
                      what=what, status=status, hub=hub, hub_zh=hub_zh),
                    T("Accept the license on the model's page, then paste a token.",
                      "请在模型页面上接受许可协议，然后粘贴访问令牌（token）。"), kind=HubFault.GATED, status=status)


def not_found(what: str, source: HubSource | None = None) -> HubError:
    hub, hub_zh = _named(source)
    return HubError(T("{what} was not found on {hub} (404).", "在 {hub_zh} 上找不到 {what}（404）。", what=what,
                      hub=hub, hub_zh=hub_zh),
                    T("Check the name, or search again.", "请检查名称，或重新搜索。"), kind=HubFault.NOT_FOUND,
                    status=404)


def rate_limited(retry_after_s: int | None, source: HubSource | None = None) -> HubError:
    hub, hub_zh = _named(source, capital=True)
    if retry_after_s is None:
        message = T("{hub} has had too many requests from this computer (429) and asks to wait.",
                    "{hub_zh} 收到来自这台电脑的请求过多（429），要求稍后再试。", hub=hub, hub_zh=hub_zh)
    else:
        message = T("{hub} has had too many requests from this computer (429) and asks to wait {s} s.",
                    "{hub_zh} 收到来自这台电脑的请求过多（429），要求等待 {s} 秒。", s=retry_after_s, hub=hub,
                    hub_zh=hub_zh)
    return HubError(message, T("Try again after that time, or paste a token: signed-in users may ask more often.",
                               "请在这段时间后重试，或粘贴访问令牌：登录用户的请求上限更高。"),
                    kind=HubFault.RATE_LIMITED, retry_after_s=retry_after_s, status=429)


def unreachable(access: HubAccess, detail: str) -> HubError:
    where = where_text(access)
    if access.source is HubSource.HUGGINGFACE and access.endpoint is None:
        step = T("Check the internet connection, or choose the mirror hf-mirror.com as the source.",
                 "请检查网络连接，或选择镜像站 hf-mirror.com 作为来源。")
    else:
        step = T("Check the internet connection, or choose another source.", "请检查网络连接，或选择其他来源。")
    return HubError(T("{where} could not be reached within {s:g} s ({detail}).",
                      "{where_zh} 在 {s:g} 秒内无法连接（{detail}）。", where=where.render("en"),
                      where_zh=where.render("zh"), s=access.connect_timeout_s, detail=detail),
                    step, kind=HubFault.UNREACHABLE)


def proxy_unreachable(access: HubAccess, detail: str) -> HubError:
    """The connection through the user's own proxy failed: the proxy is the one thing known to be at fault (the
    source was never reached), so no other source is offered: it would go through the same proxy."""
    return HubError(T("The proxy {proxy} could not be used to reach {where} ({detail}).",
                      "无法通过代理 {proxy} 连接 {where_zh}（{detail}）。", proxy=redacted(access.proxy or ""),
                      where=where_text(access).render("en"), where_zh=where_text(access).render("zh"),
                      detail=detail),
                    T("Check that the proxy program runs and its address is right, or clear the proxy to use the "
                      "system's.", "请确认代理程序正在运行且地址正确，或清空代理以使用系统代理。"),
                    kind=HubFault.PROXY)


def no_answer(access: HubAccess) -> HubError:
    where = where_text(access)
    error = unreachable(access, "")
    return HubError(T("{where} did not answer within {s:g} s.", "{where_zh} 在 {s:g} 秒内没有应答。",
                      where=where.render("en"), where_zh=where.render("zh"), s=access.read_timeout_s),
                    error.next_step, kind=HubFault.UNREACHABLE)


def bad_answer(access: HubAccess, detail: str) -> HubError:
    where = where_text(access)
    return HubError(T("{where} gave an answer the app cannot read ({detail}).",
                      "{where_zh} 返回了应用无法读取的应答（{detail}）。", where=where.render("en"),
                      where_zh=where.render("zh"), detail=detail),
                    T("Try again later, or choose another source.", "请稍后重试，或选择其他来源。"),
                    kind=HubFault.BAD_ANSWER)


def server_error(access: HubAccess, status: int) -> HubError:
    where = where_text(access)
    return HubError(T("{where} answered with an error ({status}).", "{where_zh} 返回了错误（{status}）。",
                      where=where.render("en"), where_zh=where.render("zh"), status=status),
                    T("Try again later, or choose another source.", "请稍后重试，或选择其他来源。"),
                    kind=HubFault.SERVER, status=status)


def retry_after(headers) -> int | None:
    value = (headers.get("Retry-After") or "").strip()
    return int(value) if value.isdigit() else None


def from_status(access: HubAccess, status: int, headers, what: str) -> HubError:
    if status in (401, 403):
        return gated(what, status, access.source)
    if status == 404:
        return not_found(what, access.source)
    if status == 429:
        return rate_limited(retry_after(headers), access.source)
    return server_error(access, status)


def hub_error(error: Exception, access: HubAccess, what: str) -> HubError:
    """The one sentence for a failed request about ``what`` (a repository or a file name)."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    logger.info("Hub request about %s failed: %r", what, error)
    if isinstance(error, HubError):
        return error
    if isinstance(error, HfHubHTTPError):
        response = error.response
        return from_status(access, response.status_code, response.headers, what)
    if isinstance(error, httpx2.HTTPStatusError):
        return from_status(access, error.response.status_code, error.response.headers, what)
    if isinstance(error, OfflineModeIsEnabled):
        offline = T("offline mode is on (HF_HUB_OFFLINE)", "已开启离线模式（HF_HUB_OFFLINE）")
        return unreachable(access, offline.render())
    if isinstance(error, (httpx2.ReadTimeout, httpx2.WriteTimeout, httpx2.PoolTimeout)):
        return no_answer(access)
    if access.proxy and isinstance(error, (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.ProxyError)):
        return proxy_unreachable(access, error_detail(error))  # with a proxy, the connection is made to it
    if isinstance(error, httpx2.TransportError):
        return unreachable(access, error_detail(error))
    if isinstance(error, (ValueError, KeyError, TypeError)):
        return bad_answer(access, str(error))
    raise error
