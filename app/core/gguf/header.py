"""The fixed start of a GGUF file: magic, version (v1 explained, big-endian detected), counts."""

from __future__ import annotations

from app.core.gguf.binary import Cursor, truncated
from app.core.gguf.errors import GGUFError
from app.core.text import T

MAGIC = b"GGUF"
_INT64_MAX = (1 << 63) - 1


def read_header(cur: Cursor) -> tuple[int, int, int]:
    """(tensor count, metadata count, version); switches ``cur`` to big-endian when the file is."""
    magic = cur.raw(min(cur.size, 4), "magic")
    if magic != MAGIC:
        raise GGUFError(
            T(
                "This is not a GGUF model file (it starts with {magic!r} instead of 'GGUF').",
                "这不是 GGUF 模型文件（文件开头是 {magic!r}，而不是 'GGUF'）。",
                magic=magic,
            ),
            T(
                "Pick a .gguf file. Other formats (safetensors, .bin, .pth) must be converted to GGUF first.",
                "请选择 .gguf 文件。其他格式（safetensors、.bin、.pth）需先转换为 GGUF。",
            ),
            check_id="magic",
            offset=0,
        )
    version = cur.u32("version")
    if version & 0xFFFF == 0 and version != 0:  # byte-swapped: a big-endian file
        cur.set_endian(big=True)
        version = int.from_bytes(version.to_bytes(4, "little"), "big")
    _check_version(version)
    n_tensors, n_kv = cur.u64("tensor count"), cur.u64("metadata count")
    if n_tensors > _INT64_MAX or n_tensors * 24 > cur.remaining:  # a tensor info takes >= 24 bytes
        raise truncated(f"tensor list ({n_tensors} tensors claimed)", cur.pos)
    if n_kv > _INT64_MAX or n_kv * 13 > cur.remaining:  # a key-value pair takes >= 13 bytes
        raise truncated(f"metadata ({n_kv} entries claimed)", cur.pos)
    return n_tensors, n_kv, version


def _check_version(version: int) -> None:
    if version == 1:
        raise GGUFError(
            T(
                "This is a GGUFv1 file. GGUFv1 is no longer supported by llama.cpp.",
                "这是 GGUFv1 文件。llama.cpp 已不再支持 GGUFv1。",
            ),
            T(
                "Download a current version of the model (GGUF v2 or v3), or re-convert it with a recent llama.cpp.",
                "请下载该模型的新版本（GGUF v2 或 v3），或用较新的 llama.cpp 重新转换。",
            ),
            check_id="version",
            offset=4,
        )
    if version not in (2, 3):
        raise GGUFError(
            T(
                "GGUF version {version} is not one llama.cpp can read (it reads versions 2 and 3).",
                "GGUF 版本 {version} 无法被 llama.cpp 读取（它支持版本 2 和 3）。",
                version=version,
            ),
            T("The file is damaged, or made by a much newer tool; try another download.",
              "文件已损坏，或由更新的工具生成；请尝试重新下载。"),
            check_id="version",
            offset=4,
        )
