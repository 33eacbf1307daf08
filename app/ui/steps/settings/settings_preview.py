"""The Settings step's worker call: plan the memory and build the exact command line for one config.

The engine is resolved by core every time (``resolve_backend``): the embedded one is a quick look, and a
llama-server's ``--help`` is remembered by core per file identity (path, size, mtime, inode), so a binary replaced
at the same path is inspected again instead of answering with the old one's flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

from app.core.launch.config import LaunchConfig
from app.core.problem import UserError, error_detail
from app.core.text import Text
from app.ui.widgets.problem_view import problem_text

if TYPE_CHECKING:
    from app.core.gguf.model_info import ModelInfo
    from app.core.hardware.report import HardwareReport
    from app.core.launch.backends import BackendInfo
    from app.core.plan.memory import MemoryPlan


def tr(text: str) -> str:
    return QCoreApplication.translate("", text)  # lupdate files module-level tr() under the empty context


@dataclass
class Preview:
    plan: MemoryPlan | None = None
    plan_error: BaseException | None = None
    command: str = ""
    command_error: BaseException | None = None
    notes: list[Text] = field(default_factory=list)
    backend: BackendInfo | None = None  # the engine the command line is for (kept in the model session)


def compute_preview(info: ModelInfo, config: LaunchConfig, hardware: HardwareReport | None) -> Preview:  # worker
    from app.core.launch.backends import build_argv_with_notes, command_line, resolve_backend
    from app.core.plan.memory import make_plan

    result = Preview()
    try:
        result.plan = make_plan(info, config, hardware)
    except Exception as exc:  # noqa: BLE001 - shown as a sentence, the command line still matters
        result.plan_error = exc
    try:
        result.backend = resolve_backend(config)
        argv, result.notes = build_argv_with_notes(config, result.backend)
        result.command = command_line(argv)
    except Exception as exc:  # noqa: BLE001
        result.command_error = exc
    return result


def _error_sentence(error: BaseException) -> str:
    if isinstance(error, UserError):
        return problem_text(error, labelled=False, joiner=" ")
    return error_detail(error)


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
