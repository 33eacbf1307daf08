"""Tensor checks that follow llama.cpp's loader: names it knows, layers that match, shapes it accepts.

llama.cpp asks an architecture's load function for each tensor by name, checks its shape against
the hyper-parameters, and at the end refuses the file unless it used every tensor in it. So a
renamed tensor fails twice (the name it should have is missing, the one it has is never used), a
layer beyond block_count is never asked for, and a part missing from one layer stops the load.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.gguf.arch_specs import SPECS, Plan, Present, plan_tensors
from app.core.gguf.loader_facts import (
    U32,
    VARIABLE_LAYER_ARCHS,
    block_of,
    is_known_tensor_name,
    part_words,
)
from app.core.gguf.loader_hparams import HParams
from app.core.gguf.loader_meta import DAMAGED_FIX, LoadStop, Meta
from app.core.gguf.model_info import TensorInfo
from app.core.problem import Check, Status
from app.core.text import T, Text

_MAX_LISTED = 5


@dataclass
class TensorFacts:
    """The file's tensors as the loader indexes them (names cut at a NUL byte, as ggml stores them)."""

    present: dict[str, Present] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)
    blocks: dict[int, set[str]] = field(default_factory=dict)  # layer -> parts ('attn_q.weight')

    @classmethod
    def of(cls, tensors: list[TensorInfo]) -> TensorFacts:
        facts = cls()
        for t in tensors:
            name = t.name.split("\0", 1)[0]
            if name in facts.present:
                facts.duplicates.append(name)
                continue
            facts.present[name] = Present(tuple(t.shape), t.type_id)
            block = block_of(name)
            if block is not None:
                facts.blocks.setdefault(block[0], set()).add(block[1])
        return facts


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown + (f" (+{len(names) - _MAX_LISTED})" if len(names) > _MAX_LISTED else "")


def _part(name: str) -> tuple[str, str]:
    return part_words(name)


def _shape(shape: tuple[int, ...]) -> str:
    return " x ".join(str(d) for d in shape) or "scalar"


# --- names --------------------------------------------------------------------------------------------


def names_check(facts: TensorFacts, plan: Plan | None, n_layers: int | None) -> Check:
    if facts.duplicates:
        return Check("tensor_names", Status.ERROR,
                     T("This file is damaged: two of its parts have the same name ({name}).",
                       "文件已损坏：有两个部分同名（{name}）。", name=facts.duplicates[0]),
                     DAMAGED_FIX, tuple(f"duplicated tensor {n}" for n in facts.duplicates[:_MAX_LISTED]))
    unknown = [n for n in facts.present if not is_known_tensor_name(n)]
    unused = plan.unused if plan is not None else []
    beyond = [n for n in facts.present if n_layers and (b := block_of(n)) is not None and b[0] >= n_layers]
    odd = unknown + [n for n in unused if n not in unknown]
    odd += [n for n in beyond if n not in unknown and n not in unused]
    if odd:
        first = odd[0]
        block = block_of(first)
        if first in beyond and block is not None:
            message = T("This file is damaged: it has a part for layer {layer}, but the model's layer count is {n} "
                        "(layers are numbered from 0; llama.cpp refuses files with parts it does not use).",
                        "文件已损坏：它含有第 {layer} 层的部分，但模型的层数为 {n}"
                        "（层从 0 开始编号；llama.cpp 会拒绝含有未使用部分的文件）。",
                        layer=block[0], n=n_layers)
        else:
            message = T("This file is damaged: it has a part llama.cpp does not know or use ({name}); "
                        "llama.cpp refuses files with parts it does not use.",
                        "文件已损坏：它含有 llama.cpp 不认识或不使用的部分（{name}）；"
                        "llama.cpp 会拒绝含有未使用部分的文件。",
                        name=first)
        return Check("tensor_names", Status.ERROR, message, DAMAGED_FIX,
                     (f"tensors llama.cpp will not use: {_names(odd)}",))
    return Check("tensor_names", Status.OK,
                 T("Every part of the model has a name llama.cpp uses.", "模型的每个部分都使用 llama.cpp 认识的名称。"))


# --- layers ---------------------------------------------------------------------------------------------


def _lacking_sentence(layer: int, name: str, everywhere_else: bool) -> Text:
    en, zh = _part(name)
    if everywhere_else:
        return T("This file is damaged: layer {layer} lacks a part every other layer has ({part}).",
                 "文件已损坏：第 {layer} 层缺少其他各层都有的部分（{part_zh}）。", layer=layer, part=en, part_zh=zh)
    return T("This file is damaged: layer {layer} lacks a part the model needs ({part}).",
             "文件已损坏：第 {layer} 层缺少模型必需的部分（{part_zh}）。", layer=layer, part=en, part_zh=zh)


def _ok_layers(n: int, compared: bool) -> Check:
    if compared:
        return Check("layers", Status.OK,
                     T("All {n} layers have the parts they need.", "全部 {n} 层都具备所需的部分。", n=n))
    return Check("layers", Status.OK,
                 T("{n} layers (their parts vary by design in this architecture, so they were not compared).",
                   "共 {n} 层（此架构各层的组成本就不同，因此未做比较）。", n=n))


def planned_layers_check(plan: Plan, hp: HParams) -> Check:
    layer_missing = [(name, layer) for name, layer in plan.missing if layer is not None]
    if not layer_missing:
        return _ok_layers(hp.n_layer_all, True)
    name, layer = layer_missing[0]
    part = name.split(".", 2)[2]
    others = [i for i in range(hp.n_layer) if i != layer]
    everywhere_else = bool(others) and all(f"blk.{i}.{part}" in plan.present for i in others)
    evidence = tuple(f"missing tensor {n}" for n, _ in layer_missing[:_MAX_LISTED])
    return Check("layers", Status.ERROR, _lacking_sentence(layer, name, everywhere_else), DAMAGED_FIX, evidence)


def generic_layers_check(facts: TensorFacts, meta: Meta, hp: HParams | None) -> Check | None:
    """Without an exact layout: every layer (past dense leading layers, before prediction layers) has the same
    weights."""
    if hp is None:
        return None
    n = hp.n_layer_all
    if hp.arch in VARIABLE_LAYER_ARCHS or _has_zero_per_layer(hp):
        return _ok_layers(n, False)
    dense_key = meta.akey("leading_dense_block_count")
    dense = (meta.value(dense_key) or 0) if meta.type_of(dense_key) == U32 else 0
    main = [i for i in range(min(dense, n), hp.n_layer)]
    if len(main) < 2:
        return _ok_layers(n, True)
    counts: dict[str, int] = {}
    for i in main:
        for part in facts.blocks.get(i, ()):
            counts[part] = counts.get(part, 0) + 1
    for part, count in sorted(counts.items()):
        if count == len(main) or not _is_weight(part) or count * 2 <= len(main):
            continue
        lacking = [i for i in main if part not in facts.blocks.get(i, ())]
        name = f"blk.{lacking[0]}.{part}"
        evidence = tuple(f"missing tensor blk.{i}.{part}" for i in lacking[:_MAX_LISTED])
        sentence = _lacking_sentence(lacking[0], name, len(lacking) == 1)
        return Check("layers", Status.ERROR, sentence, DAMAGED_FIX, evidence)
    return _ok_layers(n, True)


def _is_weight(part: str) -> bool:
    return part.endswith(".weight") or "." not in part


def _has_zero_per_layer(hp: HParams) -> bool:
    """Per-layer head or feed-forward counts with zeros: those layers have no attention or no feed-forward part."""
    return any(0 in values and any(values) for values in (hp.n_head, hp.n_head_kv, hp.n_ff))


# --- shapes ---------------------------------------------------------------------------------------------


def shapes_check(plan: Plan) -> Check:
    global_missing = [name for name, layer in plan.missing if layer is None]
    if global_missing:
        en, zh = _part(global_missing[0])
        return Check("tensor_shapes", Status.ERROR,
                     T("This file is damaged: it lacks a part the model needs ({part}).",
                       "文件已损坏：缺少模型必需的部分（{part_zh}）。", part=en, part_zh=zh),
                     DAMAGED_FIX, tuple(f"missing tensor {n}" for n in global_missing[:_MAX_LISTED]))
    if plan.wrong_shape:
        name, expected, found = plan.wrong_shape[0]
        en, zh = _part(name)
        block = block_of(name)
        where_en = f" of layer {block[0]}" if block else ""
        where_zh = f"第 {block[0]} 层的" if block else ""
        return Check("tensor_shapes", Status.ERROR,
                     T("This file is damaged: a part{where} ({part}) has the wrong size for this model's settings "
                       "(expected {expected}, found {found}).",
                       "文件已损坏：{where_zh}某个部分（{part_zh}）的大小与模型设置不符"
                       "（应为 {expected}，实际为 {found}）。",
                       where=where_en, where_zh=where_zh, part=en, part_zh=zh,
                       expected=_shape(expected), found=_shape(found)),
                     DAMAGED_FIX,
                     tuple(f"{n}: expected {list(e)}, found {list(f)}" for n, e, f in plan.wrong_shape[:_MAX_LISTED]))
    return Check("tensor_shapes", Status.OK,
                 T("Every part the model needs is present with the size its settings call for.",
                   "模型所需的每个部分都在，且大小与设置一致。"))


def tensor_checks(tensors: list[TensorInfo], meta: Meta, hp: HParams | None, stopped: bool) -> list[Check]:
    """Rows for the tensors; ``hp`` None when the hyper-parameters could not be read, ``stopped`` when the
    loader would stop before its tensors (then only the name checks run)."""
    facts = TensorFacts.of(tensors)
    spec = SPECS.get(hp.arch) if hp is not None else None
    n_layers = hp.n_layer_all if hp is not None else None
    if hp is None or spec is None or stopped:
        checks = [names_check(facts, None, n_layers)]
        layers = generic_layers_check(facts, meta, hp)
        return checks + ([layers] if layers else [])
    try:
        plan = plan_tensors(spec, hp, facts.present)
    except LoadStop as stop:
        return [names_check(facts, None, n_layers), Check("tensor_shapes", Status.ERROR, stop.message, DAMAGED_FIX,
                                                         stop.evidence)]
    return [names_check(facts, plan, n_layers), planned_layers_check(plan, hp), shapes_check(plan)]
