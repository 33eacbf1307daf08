"""ggml tensor types: names, storage sizes, and which llama.cpp builds can load them.

Sizes follow ggml's type traits (block size in elements, bytes per block). Build numbers are the
first llama.cpp release known to contain a type (``b6096`` = MXFP4 for gpt-oss); for the newest
types they are the first release where the type is confirmed present, so a slightly older build
may also work. Ids 4, 5, 31-33 and 36-38 were removed from GGUF files and no build loads them now.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class QuantType:
    type_id: int
    name: str
    block_size: int
    type_size: int
    since_build: int = 0  # 0 = present in every GGUF-era build


_QK_K = 256
_TYPES = [
    QuantType(0, "F32", 1, 4),
    QuantType(1, "F16", 1, 2),
    QuantType(2, "Q4_0", 32, 18),
    QuantType(3, "Q4_1", 32, 20),
    QuantType(6, "Q5_0", 32, 22),
    QuantType(7, "Q5_1", 32, 24),
    QuantType(8, "Q8_0", 32, 34),
    QuantType(9, "Q8_1", 32, 40),
    QuantType(10, "Q2_K", _QK_K, 84),
    QuantType(11, "Q3_K", _QK_K, 110),
    QuantType(12, "Q4_K", _QK_K, 144),
    QuantType(13, "Q5_K", _QK_K, 176),
    QuantType(14, "Q6_K", _QK_K, 210),
    QuantType(15, "Q8_K", _QK_K, 292),
    QuantType(16, "IQ2_XXS", _QK_K, 66, 1900),
    QuantType(17, "IQ2_XS", _QK_K, 74, 1900),
    QuantType(18, "IQ3_XXS", _QK_K, 98, 2000),
    QuantType(19, "IQ1_S", _QK_K, 50, 2200),
    QuantType(20, "IQ4_NL", 32, 18, 2200),
    QuantType(21, "IQ3_S", _QK_K, 110, 2300),
    QuantType(22, "IQ2_S", _QK_K, 82, 2300),
    QuantType(23, "IQ4_XS", _QK_K, 136, 2300),
    QuantType(24, "I8", 1, 1, 2300),
    QuantType(25, "I16", 1, 2, 2300),
    QuantType(26, "I32", 1, 4, 2300),
    QuantType(27, "I64", 1, 8, 2300),
    QuantType(28, "F64", 1, 8, 2300),
    QuantType(29, "IQ1_M", _QK_K, 56, 2600),
    QuantType(30, "BF16", 1, 2, 2800),
    QuantType(34, "TQ1_0", _QK_K, 54, 3700),
    QuantType(35, "TQ2_0", _QK_K, 66, 3700),
    QuantType(39, "MXFP4", 32, 17, 6096),
    QuantType(40, "NVFP4", 64, 36, 8298),
    QuantType(41, "Q1_0", 128, 18, 8680),
    QuantType(42, "Q2_0", 64, 18, 10000),
]
KNOWN_TYPES: dict[int, QuantType] = {t.type_id: t for t in _TYPES}

# Removed from GGUF files; sizes kept (where they existed) so a file's layout can still be checked.
REMOVED_TYPES: dict[int, QuantType] = {
    t.type_id: t
    for t in [
        QuantType(31, "Q4_0_4_4", 32, 18),
        QuantType(32, "Q4_0_4_8", 32, 18),
        QuantType(33, "Q4_0_8_8", 32, 18),
        QuantType(36, "IQ4_NL_4_4", 32, 18),
        QuantType(37, "IQ4_NL_4_8", 32, 18),
        QuantType(38, "IQ4_NL_8_8", 32, 18),
    ]
}
REMOVED_NAMES = {4: "Q4_2", 5: "Q4_3"}

# llama-cpp-python release -> llama.cpp build it vendors (0.3.36 vendors ggml-org/llama.cpp@0c1e57098 = b11312).
EMBEDDED_BUILDS = {"0.3.36": 11312}


def type_info(type_id: int) -> QuantType | None:
    """Size information for a type id, including removed types; None for ids nobody defined."""
    return KNOWN_TYPES.get(type_id) or REMOVED_TYPES.get(type_id)


def type_name(type_id: int) -> str:
    info = type_info(type_id)
    if info:
        return info.name
    return REMOVED_NAMES.get(type_id, f"TYPE_{type_id}")


def is_removed(type_id: int) -> bool:
    return type_id in REMOVED_TYPES or type_id in REMOVED_NAMES


def supported_types_for_build(build: int | None) -> set[int]:
    """Type ids a llama.cpp build can load; ``None`` (build unknown) means every current type."""
    return {t.type_id for t in _TYPES if build is None or t.since_build <= build}


def _llama_cpp_package_dir() -> Path | None:
    # find_spec on a top-level name locates the package without executing it (importing
    # llama_cpp would load the shared library, which is slow and may fail on a broken install).
    try:
        spec = importlib.util.find_spec("llama_cpp")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _package_source_match(filename: str, pattern: str) -> str | None:
    """First group of ``pattern`` in one of llama-cpp-python's source files, read as text (never imported)."""
    package = _llama_cpp_package_dir()
    if package is None:
        return None
    try:
        text = (package / filename).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(pattern, text, re.MULTILINE)
    return match.group(1) if match else None


def embedded_version() -> str | None:
    """llama-cpp-python's version, read from its source without importing it."""
    return _package_source_match("__init__.py", r"""__version__\s*=\s*["']([^"']+)["']""")


def embedded_type_count() -> int | None:
    """GGML_TYPE_COUNT of the vendored ggml, from the ctypes bindings' source text."""
    count = _package_source_match("llama_cpp.py", r"^GGML_TYPE_COUNT\s*=\s*(\d+)")
    return int(count) if count else None


def embedded_build() -> int | None:
    """llama.cpp build vendored by the installed llama-cpp-python, when this version is known."""
    version = embedded_version()
    return EMBEDDED_BUILDS.get(version) if version else None


def embedded_supported_types() -> set[int]:
    """Types the embedded backend (llama-cpp-python) can load.

    Its bindings list GGML_TYPE_COUNT (not every type: BF16 and TQ*_0 are missing there), and
    ggml rejects ids >= GGML_TYPE_COUNT, so the count is the reliable bound.
    """
    count = embedded_type_count()
    if count is not None:
        return {t.type_id for t in _TYPES if t.type_id < count}
    return supported_types_for_build(embedded_build())
