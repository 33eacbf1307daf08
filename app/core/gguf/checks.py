"""Checks on a model's contents once its header has been read: data bounds, tensor layout, types, metadata, and
what llama.cpp's loader needs (app.core.gguf.loader_checks)."""

from __future__ import annotations

from app.core.gguf.loader_checks import loader_checks
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.quant_types import KNOWN_TYPES, is_removed, type_info, type_name
from app.core.problem import Check, Fix, Status, fix_action
from app.core.text import T, human_bytes

MAX_LAYERS = 512  # llama.cpp's LLAMA_MAX_LAYERS
REDOWNLOAD = T("Download the file again; this copy is incomplete or damaged.",
               "请重新下载该文件；当前副本不完整或已损坏。")


def ok_header_checks(info: ModelInfo) -> list[Check]:
    endian = " (big-endian)" if info.big_endian else ""
    return [
        Check("magic", Status.OK, T("The file is a GGUF model.", "该文件是 GGUF 模型。")),
        Check("version", Status.OK,
              T("GGUF version {v}{endian}.", "GGUF 版本 {v}{endian}。", v=info.version, endian=endian)),
    ]


def truncation_check(info: ModelInfo) -> Check:
    beyond = [t for t in info.tensors
              if t.n_bytes is not None and info.data_offset + t.offset + t.n_bytes > info.file_size]
    if not beyond:
        return Check("truncation", Status.OK,
                     T("All tensor data lies within the file.", "所有张量数据都在文件范围内。"))
    first = min(beyond, key=lambda t: t.offset)
    missing = info.data_end - info.file_size
    return Check(
        "truncation", Status.ERROR,
        T("This file is incomplete: it is {size}, but its data needs {needed} ({missing} missing). "
          "(llama.cpp: tensor '{name}' data is not within the file bounds.)",
          "该文件不完整：文件大小为 {size}，但其数据需要 {needed}（缺少 {missing}）。"
          "（llama.cpp 会报告：部分“{name}”的数据不在文件范围内。）",
          name=first.name, size=human_bytes(info.file_size), needed=human_bytes(info.data_end),
          missing=human_bytes(missing)),
        REDOWNLOAD,
        evidence=(f"file_size={info.file_size}", f"data_end={info.data_end}", f"tensors_beyond_end={len(beyond)}"),
        action=fix_action(Fix.REDOWNLOAD, missing_bytes=missing),
    )


def offsets_check(info: ModelInfo) -> Check:
    """llama.cpp requires tensor i to start exactly where tensor i-1 ends, padded to the alignment."""
    expected = 0
    for tensor in info.tensors:
        if tensor.offset % info.alignment:
            return Check("tensor_offsets", Status.ERROR,
                         T("This file is damaged: one of its parts does not start where llama.cpp can read it "
                           "(tensor '{name}' starts at offset {offset}, not a multiple of the alignment {align}).",
                           "文件已损坏：有一个部分的起始位置 llama.cpp 无法读取"
                           "（张量“{name}”的起始偏移 {offset} 不是对齐值 {align} 的倍数）。",
                           name=tensor.name, offset=tensor.offset, align=info.alignment), REDOWNLOAD)
        if tensor.offset != expected:
            return Check("tensor_offsets", Status.ERROR,
                         T("This file is damaged: its parts are not stored one right after another, as llama.cpp "
                           "requires (tensor '{name}' has offset {offset}, expected {expected}).",
                           "文件已损坏：各部分没有按 llama.cpp 的要求一个紧接一个地存放"
                           "（张量“{name}”的偏移为 {offset}，应为 {expected}）。", name=tensor.name,
                           offset=tensor.offset, expected=expected), REDOWNLOAD)
        if tensor.n_bytes is None:
            return Check("tensor_offsets", Status.WARNING,
                         T("Tensor offsets could not be verified past '{name}' (its size is unknown).",
                           "无法验证“{name}”之后的张量偏移（其大小未知）。", name=tensor.name))
        expected += tensor.n_bytes + (-tensor.n_bytes) % info.alignment
    return Check("tensor_offsets", Status.OK, T("Tensor data is contiguous and aligned.", "张量数据连续且对齐。"))


def sizes_check(info: ModelInfo) -> Check:
    for tensor in info.tensors:
        kind = type_info(tensor.type_id)
        if kind is not None and tensor.n_bytes is None:
            return Check("tensor_sizes", Status.ERROR,
                         T("This file is damaged: one of its parts has a size its storage type cannot have "
                           "(tensor '{name}' of type {type} has rows of {row} values, not a multiple of its block "
                           "size {block}).",
                           "文件已损坏：有一个部分的大小与其存储类型不符"
                           "（类型为 {type} 的张量“{name}”每行有 {row} 个值，不是块大小 {block} 的倍数）。",
                           name=tensor.name, type=kind.name, row=tensor.shape[0] if tensor.shape else 1,
                           block=kind.block_size), REDOWNLOAD)
    return Check("tensor_sizes", Status.OK,
                 T("Tensor sizes match their shapes and types.", "张量大小与其形状和类型一致。"))


def quant_types_check(info: ModelInfo, supported: set[int] | None) -> Check:
    present = sorted({t.type_id for t in info.tensors})
    unknown = [i for i in present if i not in KNOWN_TYPES and not is_removed(i)]
    removed = [i for i in present if is_removed(i)]
    allowed = supported if supported is not None else set(KNOWN_TYPES)
    too_new = [i for i in present if i in KNOWN_TYPES and i not in allowed]
    evidence = tuple(f"{type_name(i)}={i}" for i in present)
    if unknown:
        return Check("quant_types", Status.ERROR,
                     T("The model uses tensor type id(s) {ids} that no known llama.cpp version defines.",
                       "模型使用了任何已知 llama.cpp 版本都未定义的张量类型编号 {ids}。",
                       ids=", ".join(map(str, unknown))),
                     T("The file is damaged, or needs a llama.cpp newer than this app knows; try another download.",
                       "文件已损坏，或需要比本应用所知更新的 llama.cpp；请尝试重新下载。"), evidence)
    if removed:
        names = ", ".join(type_name(i) for i in removed)
        return Check("quant_types", Status.ERROR,
                     T("The model uses {names}, a format llama.cpp removed; current builds cannot load it.",
                       "模型使用了 {names}，llama.cpp 已移除该格式；当前版本无法加载。", names=names),
                     T("Download the Q4_0 (or another current) version of this model; llama.cpp repacks Q4_0 for "
                       "your CPU itself.",
                       "请下载该模型的 Q4_0（或其他当前格式）版本；llama.cpp 会自动为您的 CPU 重新排列 Q4_0。"),
                     evidence)
    if too_new:
        newest = max(KNOWN_TYPES[i].since_build for i in too_new)
        names = ", ".join(type_name(i) for i in too_new)
        return Check("quant_types", Status.ERROR,
                     T("The model uses {names}, which the selected llama.cpp build cannot load (needs build "
                       "b{build} or newer).",
                       "模型使用了 {names}，所选的 llama.cpp 版本无法加载（需要 b{build} 或更新版本）。",
                       names=names, build=newest),
                     T("Update llama.cpp / llama-server, use the embedded backend, or download another quantization.",
                       "请更新 llama.cpp / llama-server，改用内置后端，或下载其他量化版本。"),
                     evidence, action=fix_action(Fix.UPDATE_BACKEND, min_build=newest))
    names = ", ".join(type_name(i) for i in present) or "-"
    return Check("quant_types", Status.OK,
                 T("Tensor types {names} are supported.", "张量类型 {names} 均受支持。", names=names),
                 evidence=evidence)


def metadata_check(info: ModelInfo) -> Check:
    if info.split_no is not None and info.split_no > 0:
        return Check("metadata", Status.OK, T("Part {no} of a split model: the model's details are in part 1.",
                                              "分卷模型的第 {no} 部分：模型信息位于第 1 部分。", no=info.split_no + 1))
    if not info.architecture:
        return Check("metadata", Status.ERROR,
                     T("The model does not say which architecture it is (general.architecture is missing).",
                       "模型未说明其架构（缺少 general.architecture）。"),
                     T("This file is not a complete language model; pick another file.",
                       "该文件不是完整的语言模型；请选择其他文件。"))
    if info.block_count is None:
        return Check("metadata", Status.WARNING,
                     T("The model does not state its layer count ({arch}.block_count); memory planning will be rough.",
                       "模型未说明层数（{arch}.block_count）；内存估算将比较粗略。", arch=info.architecture))
    if info.block_count > MAX_LAYERS:
        return Check("metadata", Status.ERROR,
                     T("The model claims {n} layers; llama.cpp supports at most {max}.",
                       "模型声称有 {n} 层；llama.cpp 最多支持 {max} 层。", n=info.block_count, max=MAX_LAYERS),
                     REDOWNLOAD)
    return Check("metadata", Status.OK,
                 T("{arch} model with {layers} layers, trained context {ctx}.",
                   "{arch} 模型，{layers} 层，训练上下文 {ctx}。",
                   arch=info.architecture, layers=info.block_count, ctx=info.context_length or "?"))


BASE_MODEL = T("This is a base model: it continues text instead of answering.",
               "这是一个基础模型：它会续写文本，而不是回答问题。")
BASE_MODEL_NEXT = T("Use it to continue a text, or pick an instruct/chat version of the model.",
                    "可用它续写文本，或选择该模型的指令/对话（instruct/chat）版本。")


def chat_template_check(info: ModelInfo) -> Check | None:
    """Whether the model says how a chat is laid out; without a template it is a base model that continues text.
    None for the later parts of a split model (the template is in part 1)."""
    if info.split_no is not None and info.split_no > 0:
        return None
    if info.has_chat_template:
        return Check("chat_template", Status.OK,
                     T("The model has a chat template: it answers in a chat.", "模型带有对话模板：可以在对话中回答。"))
    return Check("chat_template", Status.WARNING, BASE_MODEL, BASE_MODEL_NEXT,
                 evidence=("tokenizer.chat_template: missing",))


def content_checks(info: ModelInfo, supported: set[int] | None) -> list[Check]:
    template = chat_template_check(info)
    return ok_header_checks(info) + [
        truncation_check(info), offsets_check(info), sizes_check(info),
        quant_types_check(info, supported), metadata_check(info),
    ] + ([template] if template is not None else []) + loader_checks(info)
