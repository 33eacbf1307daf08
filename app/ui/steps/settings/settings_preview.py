"""The Settings step's worker call: plan the memory and build the exact command line for one config."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication

from app.core.launch.config import LaunchConfig
from app.core.problem import UserError
from app.core.text import Text

_backend_cache: dict[tuple[str, str | None], Any] = {}
_cache_lock = threading.Lock()


def tr(text: str) -> str:
    return QCoreApplication.translate("", text)  # lupdate files module-level tr() under the empty context


@dataclass
class Preview:
    plan: Any = None
    plan_error: BaseException | None = None
    command: str = ""
    command_error: BaseException | None = None
    notes: list[Text] = field(default_factory=list)


def _backend(config: LaunchConfig) -> Any:
    """Inspecting a backend runs ``llama-server --help``; do it once per engine and path."""
    from app.core.launch.backends import resolve_backend

    key = (config.backend, config.server_bin)
    with _cache_lock:
        if key in _backend_cache:
            return _backend_cache[key]
    backend = resolve_backend(config)
    with _cache_lock:
        _backend_cache[key] = backend
    return backend


def compute_preview(info: Any, config: LaunchConfig, hardware: Any) -> Preview:  # worker thread
    from app.core.launch.backends import build_argv_with_notes, command_line
    from app.core.plan.memory import make_plan

    result = Preview()
    try:
        result.plan = make_plan(info, config, hardware)
    except Exception as exc:  # noqa: BLE001 - shown as a sentence, the command line still matters
        result.plan_error = exc
    try:
        argv, result.notes = build_argv_with_notes(config, _backend(config))
        result.command = command_line(argv)
    except Exception as exc:  # noqa: BLE001
        result.command_error = exc
    return result


def _error_sentence(error: BaseException) -> str:
    if isinstance(error, UserError):
        return error.message.render() + (" " + error.fix.render() if error.fix else "")
    return str(error) or type(error).__name__


def plan_text(result: Preview | None) -> str:
    if result is None:
        return tr("Open a model to see how much memory it needs.")
    if result.plan is None:
        return tr("No memory plan: {error}").format(error=_error_sentence(result.plan_error or Exception("?")))
    plan = result.plan
    verdict = tr("Fits in the memory available.") if plan.fits else tr("Does not fit in the memory available.")
    lines = [verdict + " " + plan.recommendation_text().render()]
    lines += [note.render() for note in plan.notes]
    return "\n".join(lines)


def recommendation_differs(result: Preview | None, config: LaunchConfig | None) -> bool:
    plan = result.plan if result else None
    if plan is None or config is None or not plan.recommended_ctx:
        return False
    layers = min(plan.recommended_gpu_layers, plan.n_layer + 1)
    return plan.recommended_ctx != config.ctx or (plan.has_gpu and layers != config.gpu_layers)


def command_notes_text(result: Preview | None) -> str:
    if result is None:
        return ""
    lines = [note.render() for note in result.notes]
    if result.command_error is not None:
        lines.insert(0, _error_sentence(result.command_error))
    return "\n".join(lines)
