"""Share the supervised server with other devices on the network, safely: ``LanShare(supervisor, settings)``.

The server itself stays on loopback; a :class:`~app.core.server.share_proxy.ShareProxy` listens on the address the
user picked, wants the generated key and turns away what the server's slots cannot take (HTTP 429, Retry-After).
The share lives exactly as long as its supervisor: ``Supervisor.close()`` closes it.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.launch.config import BACKEND_LLAMA_SERVER
from app.core.launch.ports import is_loopback, new_api_key
from app.core.problem import UserError
from app.core.server.events import ACTIVE_STATES
from app.core.text import T, Text

if TYPE_CHECKING:
    from app.core.server.supervisor import Supervisor

logger = logging.getLogger(__name__)

ALL_NETWORKS = "0.0.0.0"
ALL_NETWORKS_V6 = "::"  # IPv6 and, where the system allows it (Linux by default), IPv4 too
LOOPBACK = "127.0.0.1"
DEFAULT_SHARE_PORT = 8090


@dataclass(frozen=True)
class ShareSettings:
    host: str = LOOPBACK  # loopback by default: sharing is a choice, never a side effect
    port: int = DEFAULT_SHARE_PORT  # 0: any free port
    api_key: str = field(default_factory=new_api_key, repr=False)
    max_active: int | None = None  # None: the server's parallel slots


def lan_addresses() -> list[str]:
    """This computer's IPv4 addresses other devices can reach: private ranges first, no loopback or link-local."""
    import socket  # loaded with the first look, as psutil: the window's first paint does without them

    import psutil

    found: set[str] = set()
    try:
        for addresses in psutil.net_if_addrs().values():
            for address in addresses:
                if address.family == socket.AF_INET:
                    found.add(address.address)
    except (OSError, psutil.Error) as error:
        logger.info("network addresses unreadable: %s", error)
    usable = [a for a in found if not ipaddress.ip_address(a).is_loopback and not ipaddress.ip_address(a).is_link_local]
    return sorted(usable, key=lambda a: (not ipaddress.ip_address(a).is_private, ipaddress.ip_address(a)))


def parse_share_address(text: str, default_port: int = DEFAULT_SHARE_PORT) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``[IPv6]`` or ``[IPv6]:PORT`` (a bare IPv6 address is a host: its colons are not
    a port). ValueError with a sentence when it is none of them."""
    text = text.strip()
    if text.startswith("["):
        host, closed, rest = text[1:].partition("]")
        if not closed or not _is_ipv6(host) or (rest and not rest.startswith(":")):
            raise ValueError(_address_sentence(text))
        return host, _port(rest[1:], text) if rest else default_port
    if text.count(":") > 1:  # IPv6 without brackets: all of it is the address
        if not _is_ipv6(text):
            raise ValueError(_address_sentence(text))
        return text, default_port
    host, sep, port = text.partition(":")
    if not host:
        raise ValueError(_address_sentence(text))
    return host, _port(port, text) if sep else default_port


def _is_ipv6(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv6Address)
    except ValueError:
        return False


def _port(text: str, whole: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise ValueError(_address_sentence(whole))
    return int(text)


def _address_sentence(text: str) -> str:
    return T("{text!r} is not an address to share on: write HOST or HOST:PORT (for example 0.0.0.0:8090), and an "
             "IPv6 address in brackets ([::1]:8090).",
             "{text!r} 不是可以共享的地址：请写成 HOST 或 HOST:PORT（例如 0.0.0.0:8090），IPv6 地址放在方括号里"
             "（[::1]:8090）。", text=text).render()


def url_host(host: str) -> str:
    """``host`` as a URL writes it: an IPv6 address in brackets."""
    return f"[{host}]" if _is_ipv6(host.split("%", 1)[0]) or ":" in host else host


def share_urls(host: str, port: int) -> list[str]:
    """The addresses to type on another device for a proxy bound to ``host``."""
    if is_loopback(host):
        return [f"http://{url_host(host) if ':' in host else LOOPBACK}:{port}"]
    hosts = lan_addresses() if host in (ALL_NETWORKS, ALL_NETWORKS_V6, "") else [host]
    return [f"http://{url_host(h)}:{port}" for h in hosts] or [f"http://{LOOPBACK}:{port}"]


def limit_sentence(urls: str, n: int, this_computer_only: bool) -> Text:
    """Where the share is and how many answers it makes at once (one / several said as such)."""
    if this_computer_only:
        where = T("Shared at {urls}, for programs on this computer only: ", "已共享于 {urls}，仅供本机上的程序使用：",
                  urls=urls)
    else:
        where = T("Shared at {urls}: ", "已共享于 {urls}：", urls=urls)
    if n == 1:
        limit = T("one answer at a time, the rest are asked to retry.", "一次回答一个请求，其余的会被告知稍后重试。")
    else:
        limit = T("at most {n} answers at once, the rest are asked to retry.",
                  "最多同时回答 {n} 个请求，其余的会被告知稍后重试。", n=n)
    return _joined(where, limit)


def _joined(first: Text, second: Text, *, en_gap: str = "") -> Text:
    """Two sentences as one, each language rendered on its own."""
    return T(first.render("en") + en_gap + second.render("en"), first.render("zh") + second.render("zh"))


def reach_sentence(host: str) -> Text:
    """Who can use a share bound to ``host``, with the key: this computer's programs only, or the network."""
    if is_loopback(host):
        return T("Only programs on this computer can use the share, with the key; other devices cannot reach it. "
                 "Answers beyond what the model can handle at once are asked to retry.",
                 "只有本机上的程序可以凭密钥使用这个共享，其他设备无法访问它。超出模型同时处理能力的请求会被告知稍后重试。")
    return T("Anyone on the network who has the key can use this model. Share only on a network you trust; answers "
             "beyond what the model can handle at once are asked to retry.",
             "网络中任何持有密钥的人都能使用这个模型。请只在您信任的网络中共享；超出模型同时处理能力的请求会被告知稍后重试。")


class LanShare:
    def __init__(self, supervisor: Supervisor, settings: ShareSettings):
        self.supervisor = supervisor
        self.settings = settings
        config = supervisor.config
        llama_server = config.backend == BACKEND_LLAMA_SERVER
        slots = config.parallel if llama_server and config.parallel > 0 else 1
        from app.core.server.share_proxy import ShareProxy  # httpx and http.server: with a share, not at start-up

        self.proxy = ShareProxy(lambda: supervisor.url, api_key=settings.api_key, host=settings.host,
                                port=settings.port, max_active=settings.max_active or slots,
                                upstream_key=lambda: supervisor.api_key,  # follows a restart with other settings
                                available=lambda: supervisor.state in ACTIVE_STATES,
                                health_path="/health" if llama_server else "/v1/models",  # the built-in has none
                                private_paths=lambda: [supervisor.config.model, supervisor.config.mmproj or ""])
        supervisor.add_closer(self.close)

    @property
    def running(self) -> bool:
        return self.proxy.running

    @property
    def urls(self) -> list[str]:
        port = self.proxy.bound_port or self.settings.port
        return share_urls(self.settings.host, port)

    def start(self) -> None:
        """Listen; a UserError with a plain sentence when the address or port cannot be used."""
        try:
            self.proxy.start()
        except OSError as error:
            raise UserError(T("Sharing cannot listen on {host} port {port}: {reason}.",
                              "无法在 {host} 的端口 {port} 上共享：{reason}。", host=self.settings.host,
                              port=self.settings.port, reason=error.strerror or str(error)),
                            T("Choose another port (or 'this computer only'), then turn sharing on again.",
                              "请换一个端口（或选择“仅本机”），然后重新打开共享。"), (str(error),)) from None

    def summary(self) -> Text:
        """What other devices need, without the key (it is shown once, by whoever created it)."""
        shared = limit_sentence(", ".join(self.urls), self.proxy.limit.max_active, is_loopback(self.settings.host))
        host = self.supervisor.config.host
        if is_loopback(host):
            return shared
        also = T("The model server itself also listens on {host}, where other devices reach it without this limit: "
                 "set its address to 127.0.0.1 in the advanced settings.",
                 "模型服务器本身也在 {host} 上监听，其他设备可以绕过这个限制直接访问它："
                 "请在高级设置中把它的地址设为 127.0.0.1。",
                 host=host)
        return _joined(shared, also, en_gap=" ")

    def close(self) -> None:
        self.proxy.close()
