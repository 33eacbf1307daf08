"""The bounded GGUF reader over any seekable stream, not only a file on disk: the header of a model on the Hub is
read through HTTP range requests (app.core.hub.ranged) with the same checks as a local file.

:func:`read_raw_stream` (from the reader: :func:`app.core.gguf.reader.read_raw` without the ``open``) is the one
parser; this module turns its results into a model's info as the reader does for local files.
"""

from __future__ import annotations

from app.core.gguf.model_info import ModelInfo, TensorInfo, build_model_info, merge_shard_summaries
from app.core.gguf.quant_types import type_name
from app.core.gguf.reader import RawGGUF


def model_info_from_raw(raw: RawGGUF) -> ModelInfo:
    return build_model_info(raw, type_name)


def merge_shards(info: ModelInfo, shards: list[RawGGUF]) -> None:
    """Make ``info`` (the first shard's) cover every shard of a split model, as the reader does for local parts."""
    tensors: list[TensorInfo] = [t for shard in shards for t in shard.tensors]
    merge_shard_summaries(info, tensors, [shard.path for shard in shards], sum(s.file_size for s in shards), type_name)
