"""GGUF inspector and validator: a bounded reader for untrusted files plus typed checks.

``read_model_info(path) -> ModelInfo`` raises ``GGUFError`` for a file it cannot read;
``validate(path, ...) -> ValidationReport`` never raises for a bad file, it reports checks.
"""

from app.core.gguf.errors import GGUFError
from app.core.gguf.model_info import ModelInfo, TensorInfo
from app.core.gguf.quant_types import embedded_supported_types, supported_types_for_build
from app.core.gguf.reader import read_model_info
from app.core.gguf.safe_copy import safe_copy_for_path_problem
from app.core.gguf.validate import ValidationReport, validate

__all__ = [
    "GGUFError",
    "ModelInfo",
    "TensorInfo",
    "ValidationReport",
    "embedded_supported_types",
    "read_model_info",
    "safe_copy_for_path_problem",
    "supported_types_for_build",
    "validate",
]
