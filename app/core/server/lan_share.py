"""Share the supervised server with other devices on the network, safely: ``LanShare(supervisor, settings)``.

The server itself stays on loopback; a :class:`~app.core.server.share_proxy.ShareProxy` listens on the address the
user picked, wants the generated key and turns away what the server's slots cannot take (HTTP 429, Retry-After).
The share lives exactly as long as its supervisor: ``Supervisor.close()`` closes it.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import psutil

from app.core.launch.ports import is_loopback, new_api_key
from app.core.problem import UserError
from app.core.server.events import ACTIVE_STATES
from app.core.server.share_proxy import ShareProxy
from app.core.text import T, Text

if TYPE_CHECKING:
    from app.core.server.supervisor import Supervisor

logger = logging.getLogger(__name__)

ALL_NETWORKS = "0.0.0.0"
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


def share_urls(host: str, port: int) -> list[str]:
    """The addresses to type on another device for a proxy bound to ``host``."""
    if is_loopback(host):
        return [f"http://{LOOPBACK}:{port}"]
    hosts = lan_addresses() if host in (ALL_NETWORKS, "") else [host]
    return [f"http://{h}:{port}" for h in hosts] or [f"http://{LOOPBACK}:{port}"]


class LanShare:
    def __init__(self, supervisor: Supervisor, settings: ShareSettings):
        self.supervisor = supervisor
        self.settings = settings
        config = supervisor.config
        slots = config.parallel if config.backend == "llama-server" and config.parallel > 0 else 1
        self.proxy = ShareProxy(lambda: supervisor.url, api_key=settings.api_key, host=settings.host,
                                port=settings.port, max_active=settings.max_active or slots,
                                upstream_key=config.api_key,
                                available=lambda: supervisor.state in ACTIVE_STATES)
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
                              "请换一个端口（或选择“仅本机”），然后重新打开共享。"), [str(error)]) from None

    def summary(self) -> Text:
        """What other devices need, without the key (it is shown once, by whoever created it)."""
        shared = T("Shared at {urls}: at most {n} answer(s) at once, the rest are asked to retry.",
                   "已共享于 {urls}：最多同时回答 {n} 个请求，其余的会被告知稍后重试。",
                   urls=", ".join(self.urls), n=self.proxy.limit.max_active)
        host = self.supervisor.config.host
        if is_loopback(host):
            return shared
        return T("{shared} The model server itself also listens on {host}, where other devices reach it without "
                 "this limit: set its address to 127.0.0.1 in the advanced settings.",
                 "{shared} 模型服务器本身也在 {host} 上监听，其他设备可以绕过这个限制直接访问它："
                 "请在高级设置中把它的地址设为 127.0.0.1。", shared=shared, host=host)

    def close(self) -> None:
        self.proxy.close()
