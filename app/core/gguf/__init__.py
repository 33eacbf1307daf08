"""GGUF inspector and validator: a bounded reader for untrusted files plus typed checks.

Public API: ``read_model_info(path) -> ModelInfo`` (raises ``GGUFError``) and
``validate(path, ...) -> ValidationReport``.
"""

from app.core.gguf.errors import GGUFError
from app.core.gguf.model_info import ModelInfo, TensorInfo
from app.core.gguf.reader import read_model_info

__all__ = ["GGUFError", "ModelInfo", "TensorInfo", "read_model_info"]
