"""Which program holds a TCP port: a busy port is often an earlier server that was never stopped."""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def port_owner(port: int) -> tuple[int, str] | None:
    """(pid, program name) of the process listening on ``port``, when the OS lets us see it."""
    try:
        import psutil

        for conn in psutil.net_connections(kind="inet"):
            if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
                return conn.pid, psutil.Process(conn.pid).name()
    except Exception:  # AccessDenied on macOS without root, processes that vanish: the owner is a nicety
        logger.debug("owner of port %s unknown", port, exc_info=True)
        return None
    return None
