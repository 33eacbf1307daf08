"""What the app knows about a GGUF model, derived from its header, metadata and tensor infos."""

from __future__ import annotations

import copy
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

FILE_TYPE_NAMES = {
    0: "ALL_F32", 1: "MOSTLY_F16", 2: "MOSTLY_Q4_0", 3: "MOSTLY_Q4_1", 4: "MOSTLY_Q4_1_SOME_F16",
    7: "MOSTLY_Q8_0", 8: "MOSTLY_Q5_0", 9: "MOSTLY_Q5_1", 10: "MOSTLY_Q2_K", 11: "MOSTLY_Q3_K_S",
    12: "MOSTLY_Q3_K_M", 13: "MOSTLY_Q3_K_L", 14: "MOSTLY_Q4_K_S", 15: "MOSTLY_Q4_K_M",
    16: "MOSTLY_Q5_K_S", 17: "MOSTLY_Q5_K_M", 18: "MOSTLY_Q6_K", 19: "MOSTLY_IQ2_XXS",
    20: "MOSTLY_IQ2_XS", 21: "MOSTLY_Q2_K_S", 22: "MOSTLY_IQ3_XS", 23: "MOSTLY_IQ3_XXS",
    24: "MOSTLY_IQ1_S", 25: "MOSTLY_IQ4_NL", 26: "MOSTLY_IQ3_S", 27: "MOSTLY_IQ3_M",
    28: "MOSTLY_IQ2_S", 29: "MOSTLY_IQ2_M", 30: "MOSTLY_IQ4_XS", 31: "MOSTLY_IQ1_M",
    32: "MOSTLY_BF16", 33: "MOSTLY_Q4_0_4_4", 34: "MOSTLY_Q4_0_4_8", 35: "MOSTLY_Q4_0_8_8",
    36: "MOSTLY_TQ1_0", 37: "MOSTLY_TQ2_0", 38: "MOSTLY_MXFP4_MOE", 39: "MOSTLY_NVFP4",
    40: "MOSTLY_Q1_0", 41: "MOSTLY_Q2_0", 1024: "GUESSED",
}
MAX_EXPANDED_LAYERS = 4096
_LAYER_NAME = re.compile(r"^blk\.(\d+)\.")
_INTERNAL_FIELDS = ("value_types", "array_types", "array_offsets", "array_ends", "arrays", "shard_tensors")


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # ggml order: shape[0] is the row length
    type_id: int
    offset: int  # relative to data_offset
    n_bytes: int | None  # None when the type is unknown or rows do not fill whole blocks

    @property
    def n_elements(self) -> int:
        n = 1
        for dim in self.shape:
            n *= dim
        return n

    @property
    def layer(self) -> int | None:
        match = _LAYER_NAME.match(self.name)
        return int(match.group(1)) if match else None


@dataclass
class ModelInfo:
    path: str
    file_size: int
    version: int
    big_endian: bool
    alignment: int
    architecture: str | None
    name: str | None
    file_type: int | None
    file_type_name: str | None
    parameter_count: int
    context_length: int | None
    embedding_length: int | None
    block_count: int | None
    head_count: list[int]
    head_count_kv: list[int]
    key_length: int | None
    value_length: int | None
    vocab_size: int | None
    has_chat_template: bool
    tensor_types: dict[str, dict[str, int]]
    layer_bytes: list[int]
    non_layer_bytes: dict[str, int]
    tensors: list[TensorInfo]
    data_offset: int
    data_end: int
    split_no: int | None
    split_count: int | None
    split_tensors_count: int | None
    metadata: dict[str, Any]
    array_lengths: dict[str, int] = field(default_factory=dict)  # key -> element count of each array
    tensor_data_bytes: int = 0  # sum of known tensor sizes
    # Split models: every shard's path (in order) when all are present. The summaries above
    # (parameter_count, tensor_types, layer_bytes, non_layer_bytes, tensor_data_bytes) then cover
    # all shards, while tensors, data_offset, data_end and file_size describe this file only.
    shard_paths: list[str] = field(default_factory=list)
    total_file_size: int = 0  # all shards together; file_size for a single file
    # What the loader checks need beyond the summaries (left out of to_dict): the GGUF type of every
    # key, each array's item type and the file offsets of its first item (and, for string arrays, of
    # its end), the arrays small enough to keep (per-layer values; None for the big ones), and for a
    # split model every shard's tensors.
    value_types: dict[str, int] = field(default_factory=dict)
    array_types: dict[str, int] = field(default_factory=dict)
    array_offsets: dict[str, int] = field(default_factory=dict)
    array_ends: dict[str, int] = field(default_factory=dict)  # string arrays only
    arrays: dict[str, Any] = field(default_factory=dict)
    shard_tensors: list[TensorInfo] = field(default_factory=list)

    def to_dict(self, include_tensors: bool = False) -> dict[str, Any]:
        data = {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self)
                if f.name not in _INTERNAL_FIELDS and f.name != "tensors"}
        if include_tensors:
            data["tensors"] = [asdict(t) | {"shape": list(t.shape)} for t in self.tensors]
        else:
            data["tensor_count"] = len(self.tensors)
        return data


def _arch_key(metadata: dict[str, Any], arch: str | None, suffix: str) -> Any:
    return metadata.get(f"{arch}.{suffix}") if arch else None


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def per_layer(value: Any, n_layers: int | None) -> list[int]:
    """A head count given as a scalar or a per-layer array, expanded to one entry per layer."""
    if isinstance(value, list):
        values = [v for v in (_as_int(x) for x in value) if v is not None]
        return values[:n_layers] if n_layers and n_layers > 0 else values
    scalar = _as_int(value)
    if scalar is None:
        return []
    # a damaged block_count must not turn into a billion-entry list
    return [scalar] * (n_layers if n_layers and 0 < n_layers <= MAX_EXPANDED_LAYERS else 1)


def _tensor_summary(tensors: list[TensorInfo], type_name) -> tuple[dict, list[int], dict[str, int]]:
    types: dict[str, dict[str, int]] = {}
    layers: dict[int, int] = {}
    non_layer: dict[str, int] = {}
    for t in tensors:
        size = t.n_bytes or 0
        entry = types.setdefault(type_name(t.type_id), {"count": 0, "bytes": 0})
        entry["count"] += 1
        entry["bytes"] += size
        layer = t.layer
        if layer is None:
            non_layer[t.name] = non_layer.get(t.name, 0) + size
        elif layer < MAX_EXPANDED_LAYERS:  # llama.cpp caps block_count at 512; a wild index is not worth a huge list
            layers[layer] = layers.get(layer, 0) + size
    layer_bytes = [0] * (max(layers) + 1 if layers else 0)
    for index, size in layers.items():
        layer_bytes[index] = size
    return types, layer_bytes, non_layer


def build_model_info(raw: Any, type_name) -> ModelInfo:
    """Turn the reader's raw header (``raw``: RawGGUF) into a ModelInfo."""
    md = raw.metadata
    arch = md.get("general.architecture") if isinstance(md.get("general.architecture"), str) else None
    block_count = _as_int(_arch_key(md, arch, "block_count"))
    embd = _as_int(_arch_key(md, arch, "embedding_length"))
    heads = per_layer(_arch_key(md, arch, "attention.head_count"), block_count)
    heads_kv = per_layer(_arch_key(md, arch, "attention.head_count_kv"), block_count) or list(heads)
    n_head0 = heads[0] if heads else 0
    default_head_dim = embd // n_head0 if embd and n_head0 else None
    key_length = _as_int(_arch_key(md, arch, "attention.key_length")) or default_head_dim
    value_length = _as_int(_arch_key(md, arch, "attention.value_length")) or default_head_dim
    vocab = raw.array_lengths.get("tokenizer.ggml.tokens")
    if vocab is None:
        vocab = _as_int(_arch_key(md, arch, "vocab_size"))
    template_length = raw.string_lengths.get("tokenizer.chat_template", 0)
    file_type = _as_int(md.get("general.file_type"))
    types, layer_bytes, non_layer = _tensor_summary(raw.tensors, type_name)
    return ModelInfo(
        path=raw.path,
        file_size=raw.file_size,
        version=raw.version,
        big_endian=raw.big_endian,
        alignment=raw.alignment,
        architecture=arch,
        name=md.get("general.name") if isinstance(md.get("general.name"), str) else None,
        file_type=file_type,
        file_type_name=FILE_TYPE_NAMES.get(file_type) if file_type is not None else None,
        parameter_count=sum(t.n_elements for t in raw.tensors),
        context_length=_as_int(_arch_key(md, arch, "context_length")),
        embedding_length=embd,
        block_count=block_count,
        head_count=heads,
        head_count_kv=heads_kv,
        key_length=key_length,
        value_length=value_length,
        vocab_size=vocab,
        has_chat_template=template_length > 0,
        tensor_types=types,
        layer_bytes=layer_bytes,
        non_layer_bytes=non_layer,
        tensors=raw.tensors,
        data_offset=raw.data_offset,
        data_end=raw.data_offset + raw.data_size,
        split_no=_as_int(md.get("split.no")),
        split_count=_as_int(md.get("split.count")),
        split_tensors_count=_as_int(md.get("split.tensors.count")),
        metadata={k: v for k, v in md.items() if raw.value_types.get(k) != 9},  # 9 = ARRAY
        array_lengths=dict(raw.array_lengths),
        tensor_data_bytes=sum(t.n_bytes or 0 for t in raw.tensors),
        total_file_size=raw.file_size,
        value_types=dict(raw.value_types),
        array_types=dict(raw.array_types),
        array_offsets=dict(raw.array_offsets),
        array_ends=dict(raw.array_ends),
        arrays={k: v for k, v in md.items() if raw.value_types.get(k) == 9},
    )


def merge_shard_summaries(info: ModelInfo, shard_tensors: list[TensorInfo], shard_paths: list[str],
                          total_size: int, type_name) -> None:
    """Make the size summaries of ``info`` cover every shard of a split model."""
    types, layer_bytes, non_layer = _tensor_summary(shard_tensors, type_name)
    info.tensor_types, info.layer_bytes, info.non_layer_bytes = types, layer_bytes, non_layer
    info.parameter_count = sum(t.n_elements for t in shard_tensors)
    info.tensor_data_bytes = sum(t.n_bytes or 0 for t in shard_tensors)
    info.shard_paths, info.total_file_size = shard_paths, total_size
    info.shard_tensors = list(shard_tensors)
