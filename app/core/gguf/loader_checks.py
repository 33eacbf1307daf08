"""The doctor's checks that follow llama.cpp's model loader, step by step, on a file the reader could parse.

``loader_checks(info)`` adds rows the existing structural checks do not cover: the metadata the
loader reads (``loader_metadata``), the tokenizer (``tokenizer``), the tensor names
(``tensor_names``), the layers (``layers``) and, for architectures whose layout the app knows, the
tensor shapes (``tensor_shapes``). Each row is one plain sentence with the raw fact in its evidence.
A file that passes them loads in llama.cpp as far as its metadata and tensor layout go.
"""

from __future__ import annotations

import sys

from app.core.gguf.arch_specs import SPECS
from app.core.gguf.loader_facts import ARRAY, BOOL
from app.core.gguf.loader_hparams import HParams, read_architecture, read_hparams
from app.core.gguf.loader_meta import DAMAGED_FIX, LoadStop, Meta
from app.core.gguf.loader_tensors import tensor_checks
from app.core.gguf.loader_vocab import check_vocab
from app.core.gguf.model_info import ModelInfo
from app.core.problem import Check, Status
from app.core.text import T


def _error(stop: LoadStop, check_id: str | None = None) -> Check:
    return Check(check_id or stop.check_id, Status.ERROR, stop.message, stop.next_step or DAMAGED_FIX, stop.evidence)


def _endian_check(info: ModelInfo) -> Check | None:
    if info.big_endian and sys.byteorder == "little":
        return Check("loader_metadata", Status.ERROR,
                     T("This file is written for big-endian computers (such as IBM Z); llama.cpp on this computer "
                       "cannot read it.", "该文件是为大端序计算机（如 IBM Z）写的；本机上的 llama.cpp 无法读取。"),
                     T("Download the ordinary (little-endian) GGUF of this model.",
                       "请下载该模型的普通（小端序）GGUF 文件。"),
                     ("GGUF byte order: big-endian",))
    return None


def _metadata(meta: Meta) -> tuple[Check, HParams | None, bool]:
    """(row, hyper-parameters or None, whether the loader stops here)."""
    try:
        arch = read_architecture(meta)
        meta.arch = arch
        hp = read_hparams(meta, arch)
        spec = SPECS.get(arch)
        if spec is not None:
            spec.hparams(meta, hp)
        _tensor_extra(meta)
    except LoadStop as stop:
        return _error(stop, "loader_metadata"), None, True
    return (Check("loader_metadata", Status.OK,
                  T("The model's settings are all there, of the types llama.cpp reads.",
                    "模型的设置齐全，类型均符合 llama.cpp 的读取要求。")), hp, False)


def _tokenizer(meta: Meta, hp: HParams | None) -> tuple[Check, bool]:
    try:
        n_vocab = check_vocab(meta)
    except LoadStop as stop:
        return _error(stop, "tokenizer"), True
    if hp is not None:
        hp.n_vocab = n_vocab
    return Check("tokenizer", Status.OK,
                 T("The tokenizer is complete: {n} tokens, with consistent lists.",
                   "分词器完整：共 {n} 个词元，各列表一致。", n=n_vocab)), False


def _tensor_extra(meta: Meta) -> None:
    """general.tensor_extra.* (per-tensor precision hints, read after the tensors): a malformed one stops the load."""
    if meta.get_array("general.tensor_extra.name", "str") is None:
        return
    key = "general.tensor_extra.prec_a4"
    names = meta.length("general.tensor_extra.name")
    if meta.type_of(key) != ARRAY or meta.item_type(key) != BOOL or meta.length(key) != names:
        raise LoadStop(T("This file is damaged: its per-part precision hints are incomplete.",
                         "文件已损坏：各部分的精度提示不完整。"),
                       (f"{key} missing or not matching general.tensor_extra.name",))


def loader_checks(info: ModelInfo) -> list[Check]:
    """Rows that follow llama.cpp's loader; none for a later part of a split model (the loader reads part 1)."""
    if (info.split_no or 0) > 0:
        return []
    endian = _endian_check(info)
    if endian is not None:
        return [endian]
    meta = Meta(info)
    metadata, hp, stopped = _metadata(meta)
    tokenizer, vocab_stopped = _tokenizer(meta, hp)
    checks = [metadata, tokenizer]
    split = (info.split_count or 0) > 1
    if split and not info.shard_tensors:
        return checks  # a part is missing or unreadable: the split check says which
    tensors = info.shard_tensors if split else info.tensors
    return checks + tensor_checks(tensors, meta, hp, stopped or vocab_stopped)
