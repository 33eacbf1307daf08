"""The MODEL argument: refuse, in one sentence, a file that cannot load before any server is started."""

from __future__ import annotations

from pathlib import Path

from app.core.gguf.checks import truncation_check
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.path_checks import existence_check
from app.core.gguf.reader import read_model_info
from app.core.problem import Check, Status, UserError


def _raise_if_error(check: Check) -> None:
    if check.status is Status.ERROR:
        raise UserError(check.message, check.next_step, check.evidence, action=check.action)


def read_model(path: str) -> ModelInfo:
    """Header of a loadable-looking model; UserError for missing, folder, empty, not GGUF or truncated files."""
    model = Path(path).expanduser()
    _raise_if_error(existence_check(model))
    info = read_model_info(model)
    _raise_if_error(truncation_check(info))
    return info
