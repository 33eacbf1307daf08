"""What the Model step asks of core, as plain functions for workers, plus the sentences it shows.

The ``*_file``/``write_*``/``copy_*`` functions run on worker threads (they touch the disk); the
``*_text`` helpers run on the GUI thread and only format values.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QMimeData

from app.core.gguf.naming import file_type_text, own_name_note
from app.core.problem import Check, FixAction, Status, UserError, error_detail
from app.core.session import CheckedModel, check_model
from app.core.text import T, human_bytes
from app.ui.widgets.problem_view import problem_text

if TYPE_CHECKING:  # the demo code is imported when the demo is asked for: faster start-up
    from app.core.demo.fetch import DemoProgress, DemoResult


def tr(text: str) -> str:
    return QCoreApplication.translate("", text)  # lupdate files module-level tr() under the empty context


# --- worker-thread calls -------------------------------------------------------------------------


def validate_file(path: str, expected_sha256: str | None = None, compute_sha256: bool = False,
                  progress: Callable | None = None, cancel: Callable | None = None,
                  backend: str | None = None) -> CheckedModel:
    """``backend``: the engine of the window's session (``ModelSession.engine``), a projector is judged for it."""
    return check_model(path, expected_sha256, compute_sha256, progress, cancel, backend)


def hash_file(path: str, expected_sha256: str | None, progress: Callable, cancel: Callable,
              backend: str | None = None) -> CheckedModel:
    return validate_file(path, expected_sha256, True, progress, cancel, backend)


def get_demo_model(progress: Callable[[DemoProgress], None], cancel: Callable[[], bool],
                   **options: Any) -> DemoResult:
    """The real demo model (fetched once) or the random fallback; a ``DemoResult``. ``options`` go to core."""
    from app.core.demo.fetch import get_demo_model as core_get_demo_model

    return core_get_demo_model(progress=progress, cancel=cancel, **options)


def copy_to_safe_folder(path: str, action: FixAction) -> Path:
    from app.core.gguf.path_checks import safe_model_dir
    from app.core.gguf.safe_copy import safe_copy_for_path_problem

    target_dir = action.get("suggested_dir") or str(safe_model_dir())
    return Path(safe_copy_for_path_problem(path, target_dir))


# --- GUI-thread helpers --------------------------------------------------------------------------


def report_from_error(path: str | None, error: BaseException) -> CheckedModel:
    message = error.message if isinstance(error, UserError) else T(
        "This file could not be checked: {error}", "无法检查此文件：{error}", error=error_detail(error))
    next_step = error.next_step if isinstance(error, UserError) else None
    evidence = error.evidence if isinstance(error, UserError) else ()
    return CheckedModel(str(path), None, [Check("open", Status.ERROR, message, next_step, evidence)])


def error_text(error: BaseException) -> str:
    if isinstance(error, UserError):
        return problem_text(error, labelled=False, joiner=" ")
    return error_detail(error)


def open_dialog_folder(models: list[str], home: Path | None = None) -> str:
    """Where the Open dialog starts: the folder of the last opened model the user chose (not the demo or a safe copy
    in the app's own folders) that still exists, else the user's Downloads folder, else the home folder."""
    from app.core import paths

    own = [paths.data_dir().resolve(), paths.cache_dir().resolve()]
    for model in models:
        folder = Path(model).expanduser().resolve().parent
        if folder.is_dir() and not any(folder == d or d in folder.parents for d in own):
            return str(folder)
    home = home if home is not None else Path.home()
    downloads = home / "Downloads"
    return str(downloads if downloads.is_dir() else home)


def is_demo_model(path: str | None) -> bool:
    from app.core.demo.fetch import demo_kind

    return demo_kind(path) is not None


def demo_intro_text() -> str:
    """What the demo model is, before one was opened (core's sentence, with the size and name it pins)."""
    from app.core.demo.source import intro_text

    return intro_text().render()


def demo_hint_text(path: str | None, result: DemoResult | None = None) -> str:
    """What the open demo model is (core's label, as the CLI prints it); for the random fallback also why, and what
    the copy answered when it was checked (or why the download is open instead)."""
    from app.core.demo.fetch import check_sentence, demo_label

    label = demo_label(path)
    if label is None:
        return ""
    lines = [label.render()]
    if result is not None and str(result.path) == str(path):
        lines += [error_text(said) for said in (result.problem, result.note) if said is not None]
        if result.check is not None and result.note is None:
            lines.append(check_sentence(result.check).render())
    return "\n".join(lines)


def dropped_path(mime: QMimeData) -> str | None:
    for url in mime.urls() if mime.hasUrls() else []:
        if url.isLocalFile():  # no stat here (GUI thread); the checks say if it is missing
            return url.toLocalFile()
    return None


def fraction(value: Any) -> float:
    """Progress as 0..1 from (done, total), a fraction, or a dict with done/total."""
    if isinstance(value, dict):
        value = (value.get("done", 0), value.get("total", 0))
    if isinstance(value, (tuple, list)):
        if len(value) < 2:
            return 0.0
        done, total = value[0], value[1]
        return min(1.0, done / total) if total else 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return min(1.0, number if number <= 1.0 else number / 100.0)


def summary_text(path: str | None, model: CheckedModel | None) -> str:
    if path is None:
        return tr("No model yet. Open a .gguf file (or drop one here), or try the demo model.")
    name = Path(path).name
    info = model.info if model is not None else None
    if info is None:
        return name
    parts = [info.architecture or "?"]  # the title is the file name (the line above); see summary_tooltip
    if info.parameter_count:
        parts.append(tr("{n} parameters").format(n=_short_count(info.parameter_count)))
    file_type = file_type_text(info.file_type_name)
    if file_type is not None:
        parts.append(file_type.render())
    parts.append(human_bytes(info.file_size))
    if info.context_length:
        parts.append(tr("trained context {n}").format(n=info.context_length))
    return f"{name}\n" + " · ".join(unbroken(str(part)) for part in parts)  # lines break at the " · " only


def summary_tooltip(path: str | None, model: CheckedModel | None) -> str:
    """What the file calls itself (its ``general.name``), when that says something its file name does not."""
    info = model.info if model is not None else None
    if path is None or info is None:
        return ""
    note = own_name_note(Path(path).name, info.name)
    return note.render() if note is not None else ""


def _is_cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"


def unbroken(text: str) -> str:
    """``text`` that a wrapping label keeps on one line: no-break spaces, and a word joiner (zero width) between
    Chinese characters, which may otherwise break anywhere ("训练上下文" split across two lines)."""
    out = []
    for i, ch in enumerate(text):
        if i and (_is_cjk(ch) or _is_cjk(text[i - 1])):
            out.append("\u2060")
        out.append("\u00a0" if ch == " " else ch)
    return "".join(out)


def _short_count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def hash_check(model: CheckedModel | None) -> Check | None:
    for check in (model.checks if model is not None else []):
        if check.id.startswith("sha256"):
            return check
    return None
