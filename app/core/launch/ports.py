"""Network helpers for the server: is a port free, find a free one, is a host loopback-only."""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import sys

logger = logging.getLogger(__name__)

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """True when only this machine can reach a server bound to ``host``."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _family(host: str) -> int:
    import socket  # socket and its imports load with the first server, not before the window's first paint

    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _bind_host(host: str) -> str:
    name = host.strip().strip("[]")
    return "127.0.0.1" if name.lower() in LOOPBACK_NAMES else name


def is_port_free(host: str, port: int) -> bool:
    """Whether a server could listen on host:port right now.

    SO_REUSEADDR mirrors what llama-server and uvicorn set, so TIME_WAIT leftovers from a
    server that just died do not count as busy (on Windows that option means "steal", so not there).
    """
    import socket

    bind_host = _bind_host(host)
    with socket.socket(_family(bind_host), socket.SOCK_STREAM) as sock:
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((bind_host, port))
        except OSError:
            return False
    return True


def find_free_port(host: str = "127.0.0.1") -> int:
    """A port the OS says is free now (it may be taken again before use; callers re-check on bind errors)."""
    import socket

    bind_host = _bind_host(host)
    with socket.socket(_family(bind_host), socket.SOCK_STREAM) as sock:
        sock.bind((bind_host, 0))
        return int(sock.getsockname()[1])


def connect_host(host: str) -> str:
    """The address a client on this machine uses to reach a server bound to ``host``."""
    name = host.strip().strip("[]")
    if name in ("0.0.0.0", ""):
        return "127.0.0.1"
    if name == "::":
        return "::1"
    return name


def base_url(host: str, port: int) -> str:
    name = connect_host(host)
    if ":" in name:
        name = f"[{name}]"
    return f"http://{name}:{port}"


# Letters and digits that cannot be mistaken for one another when a key is read off a screen and typed on a phone:
# no I, l, 1, O, 0 (nor o); 32 of these 54 characters are about 184 bits.
KEY_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789"
KEY_LENGTH = 32


def new_api_key() -> str:
    """A random key of letters and digits only: it never starts with "-" (a command-line parser would take
    "--api_key -x…" for two options) and has no look-alike characters (I l 1 O 0)."""
    import secrets

    return "".join(secrets.choice(KEY_ALPHABET) for _ in range(KEY_LENGTH))


def masked_key(key: str | None) -> str:
    """A key as it may be shown on a screen, a projector or in a log: its first 4 characters and dots."""
    if not key:
        return ""
    return key[:4] + "\u2022" * 8 if len(key) > 8 else "\u2022" * 8


def settle_network(config, key: str | None = None):
    """Make a config safe to start: a key when reachable from other machines (``key``, else a new one), a free port.
    Returns (config, notes).

    Each change comes with a sentence (``Text``) the UI shows, so nothing changes silently.
    """

    from app.core.text import T

    notes = []
    if not is_loopback(config.host) and (not config.api_key or config.api_key == key):
        config = config.with_changes(api_key=config.api_key or key or new_api_key())
        notes.append(T("The server listens on {host}, so other computers can reach it; it wants the API key "
                       "created for it ({key}).",
                       "服务器监听 {host}，其他电脑可以访问；它需要为它生成的 API 密钥（{key}）。",
                       host=config.host, key=masked_key(config.api_key)))
    _check_port_number(config.port)
    try:
        if config.port == 0:  # "any free port" (a diagnosis fix for a busy port says so)
            config = config.with_changes(port=find_free_port(config.host))
        elif config.pick_free_port and not is_port_free(config.host, config.port):
            new_port = find_free_port(config.host)
            notes.append(busy_port_note(config.port, new_port, reserved_port_range(config.port)))
            config = config.with_changes(port=new_port)
    except (OSError, UnicodeError) as error:  # an unknown name, or an address that is not this computer's
        raise _unusable_host(config.host, error) from None
    return config, notes


def _check_port_number(port: int) -> None:
    from app.core.problem import UserError
    from app.core.text import T

    if not 0 <= port <= 65535:
        raise UserError(T("Port {port} does not exist: port numbers go from 1 to 65535.",
                          "端口 {port} 不存在：端口号的范围是 1 到 65535。", port=port),
                        T("Choose a port such as 8080.", "请选择一个端口，例如 8080。"))


def _unusable_host(host: str, error: Exception):
    from app.core.problem import UserError
    from app.core.text import T

    return UserError(T("The server cannot listen on {host}: it is not an address of this computer.",
                       "服务器无法监听 {host}：它不是本机的地址。", host=host),
                     T("Use 127.0.0.1 (this computer only) or 0.0.0.0 (all networks).",
                       "请使用 127.0.0.1（仅本机）或 0.0.0.0（所有网络）。"), (f"{type(error).__name__}: {error}",))


# A port in one of these ranges cannot be bound by any program on Windows (WSAEACCES, 10013), although netstat shows
# nothing on it: Hyper-V, WSL and Docker reserve ranges ("netsh int ipv4 show excludedportrange protocol=tcp").
_EXCLUDED_RANGE_LINE = re.compile(r"^\s*(\d{1,5})\s+(\d{1,5})\s*\*?\s*$")
WSAEACCES = 10013


def parse_excluded_ranges(text: str) -> list[tuple[int, int]]:
    """(start, end) pairs from netsh's "Port Exclusion Ranges" table, in any display language."""
    ranges = []
    for line in text.splitlines():
        match = _EXCLUDED_RANGE_LINE.match(line)
        if match:
            ranges.append((int(match.group(1)), int(match.group(2))))
    return ranges


def reserved_port_range(port: int, netsh_output: str | None = None) -> tuple[int, int] | None:
    """The Windows-reserved range that holds ``port``, else None. ``netsh_output``: netsh's table as text; by default
    netsh is asked on Windows (elsewhere no port is reserved this way)."""
    if netsh_output is None:
        netsh_output = _netsh_excluded_ranges()
    for start, end in parse_excluded_ranges(netsh_output):
        if start <= port <= end:
            return start, end
    return None


def _netsh_excluded_ranges() -> str:
    if sys.platform != "win32":
        return ""
    import subprocess

    try:
        done = subprocess.run(["netsh", "int", "ipv4", "show", "excludedportrange", "protocol=tcp"],
                              capture_output=True, text=True, timeout=5,
                              creationflags=subprocess.CREATE_NO_WINDOW)
    except (OSError, subprocess.SubprocessError) as error:
        logger.warning("netsh could not list the reserved port ranges: %s", error)
        return ""
    return done.stdout or ""


def busy_port_note(port: int, new_port: int, reserved: tuple[int, int] | None):
    """The sentence for a port that could not be used and the one used instead."""
    from app.core.text import T

    if reserved is not None:
        return T("Windows reserves ports {start}–{end} (port {port} among them) for its own use, although no program "
                 "uses them; using port {new_port} instead.",
                 "Windows 保留了端口 {start}–{end}（包括端口 {port}）供自己使用，尽管没有程序在用；"
                 "改用端口 {new_port}。",
                 start=reserved[0], end=reserved[1], port=port, new_port=new_port)
    return T("Port {port} is in use by another program; using port {new_port} instead.",
             "端口 {port} 已被其他程序占用；改用端口 {new_port}。", port=port, new_port=new_port)
