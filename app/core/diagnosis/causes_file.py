"""Sentences for problems with the model file: restarting never helps, the file or the llama.cpp build must change."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.diagnosis.situation import Situation
from app.core.text import T, Text

Parts = tuple[Text, Text, dict, bool]  # message, fix hint, fix, restartable

REDOWNLOAD = T(
    "Download the model again and compare its SHA-256 checksum with the one on the download page.",
    "重新下载模型，并与下载页面上的 SHA-256 校验值进行比对。",
)
UPDATE_LLAMA = T(
    "Update llama.cpp (or this app), or download a different file of this model.",
    "更新 llama.cpp（或本程序），或下载该模型的其他文件。",
)

ASCII_PATH = T("Its path contains non-English characters or spaces, which some llama.cpp builds cannot open: "
               "move it to a simple folder such as C:\\models or ~/models and choose it again.",
               "它的路径包含中文等非英文字符或空格，部分 llama.cpp 版本无法打开："
               "请把它移到 C:\\models 或 ~/models 这类简单路径后重新选择。")


def not_gguf(s: Situation) -> Parts:
    return (T("The model file {model} is not a GGUF model: it may be a web page, an unfinished download "
              "or another format.",
              "模型文件 {model} 不是 GGUF 模型：它可能是网页、未下载完的文件或其他格式。", model=s.model_name),
            REDOWNLOAD, {}, False)


def gguf_too_old(s: Situation) -> Parts:
    return (T("The model file {model} uses GGUF version 1, which llama.cpp no longer reads.",
              "模型文件 {model} 使用的是 GGUF 第 1 版，llama.cpp 已不再支持。", model=s.model_name),
            T("Download a newer conversion of this model (GGUF version 2 or 3).",
              "下载该模型较新的转换版本（GGUF 第 2 或第 3 版）。"), {}, False)


def gguf_too_new(s: Situation) -> Parts:
    return (T("The model file {model} uses a newer GGUF version than this llama.cpp understands.",
              "模型文件 {model} 的 GGUF 版本比当前 llama.cpp 支持的更新。", model=s.model_name),
            UPDATE_LLAMA, {}, False)


def model_truncated(s: Situation) -> Parts:
    return (T("The model file {model} is incomplete: it ends before all of its data "
              "(an interrupted download or a full disk).",
              "模型文件 {model} 不完整：文件在数据结束前就断了（下载中断或磁盘已满）。", model=s.model_name),
            REDOWNLOAD, {}, False)


def model_corrupt(s: Situation) -> Parts:
    return (T("The model file {model} is damaged: llama.cpp could not read its contents.",
              "模型文件 {model} 已损坏：llama.cpp 无法读取其内容。", model=s.model_name), REDOWNLOAD, {}, False)


def unsupported_architecture(s: Situation) -> Parts:
    return (T("This llama.cpp does not know the model type '{arch}' of {model}.",
              "当前 llama.cpp 不认识模型 {model} 的类型“{arch}”。", arch=s.group("arch") or "?", model=s.model_name),
            T("Update llama.cpp (or this app), or choose a model of a common type such as llama, qwen2 or gemma.",
              "更新 llama.cpp（或本程序），或选择 llama、qwen2、gemma 等常见类型的模型。"), {}, False)


def unsupported_quant_type(s: Situation) -> Parts:
    return (T("The model file {model} uses a quantisation type that this llama.cpp cannot read.",
              "模型文件 {model} 使用了当前 llama.cpp 无法读取的量化类型。", model=s.model_name),
            T("Update llama.cpp, or download a common quantisation of this model such as Q4_K_M.",
              "更新 llama.cpp，或下载该模型常见的量化版本，例如 Q4_K_M。"), {}, False)


def model_incompatible(s: Situation) -> Parts:
    return (T("The model file {model} does not match what llama.cpp expects for its type "
              "(missing or wrongly shaped parts).",
              "模型文件 {model} 与 llama.cpp 对该类型的要求不符（缺少部分数据或形状不对）。", model=s.model_name),
            UPDATE_LLAMA, {}, False)


WINDOWS_MAX_PATH = 260  # MAX_PATH: programs that do not opt into long paths cannot open a path this long or longer
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")


def too_long_for_windows(path: str) -> bool:
    """A Windows path (drive letter or UNC) of MAX_PATH characters or more."""
    return bool(path) and len(path) >= WINDOWS_MAX_PATH and bool(_WINDOWS_PATH.match(path))


def _long_path(s: Situation) -> Parts:
    return (T("The model's path is {length} characters long; Windows programs such as llama.cpp cannot open a path "
              "of {limit} characters or more.",
              "模型文件的路径长达 {length} 个字符；llama.cpp 这类 Windows 程序无法打开 {limit} 个字符或更长的路径。",
              length=len(s.model_path), limit=WINDOWS_MAX_PATH),
            T("Move the model to a short folder such as C:\\models and choose it again.",
              "把模型移到 C:\\models 这类较短的文件夹，然后重新选择。"), {}, False)


def model_not_found(s: Situation) -> Parts:
    message = T("The model file {model} was not found.", "找不到模型文件 {model}。", model=s.model_name)
    if too_long_for_windows(s.model_path):
        return _long_path(s)
    if s.model_path and not s.model_path.isascii():
        return message, ASCII_PATH, {}, False
    return (message, T("Check that the file still exists at {path}, or choose it again.",
                       "请确认文件仍在 {path}，或重新选择该文件。", path=s.model_path or "?"), {}, False)


def model_unreadable(s: Situation) -> Parts:
    return (T("The model file {model} cannot be read: permission denied.",
              "无法读取模型文件 {model}：没有访问权限。", model=s.model_name),
            T("Give your user account read access to the file, or copy it into your own folder.",
              "给当前用户授予该文件的读取权限，或把它复制到你自己的文件夹。"), {}, False)


def mmap_failed(s: Situation) -> Parts:
    fix = {"load_mode": "none"} if getattr(s.config, "load_mode", None) != "none" else {}
    hint = (T("Turn off memory-mapping (load mode 'none') and restart.",
              "关闭内存映射（加载方式选“none”），然后重新启动。")
            if fix else T("Close other programs to free memory, or choose a smaller model.",
                          "关闭其他程序以释放内存，或选择更小的模型。"))
    return (T("The model file {model} could not be mapped into memory.", "无法把模型文件 {model} 映射到内存。",
              model=s.model_name), hint, fix, False)


def model_load_failed(s: Situation) -> Parts:
    message = T("The model file {model} could not be loaded.", "无法加载模型文件 {model}。", model=s.model_name)
    path = s.model_path
    if too_long_for_windows(path):
        return _long_path(s)
    if path and (not path.isascii() or " " in path):
        return message, ASCII_PATH, {}, False
    return (message,
            T("Check that it is a complete GGUF model: download it again and compare its SHA-256 checksum "
              "with the download page.",
              "请确认它是完整的 GGUF 模型：重新下载，并与下载页面上的 SHA-256 校验值进行比对。"), {}, False)


def projector_failed(s: Situation) -> Parts:
    """llama-server refused the vision projector (mmproj) given next to the model: another model's, or damaged."""
    projector = getattr(s.config, "mmproj", None)
    fix = {"mmproj": None} if projector else {}
    return (T("The vision projector {projector} does not fit the model {model}: it belongs to another model or "
              "is damaged.",
              "视觉投影文件 {projector} 与模型 {model} 不匹配：它属于另一个模型，或已损坏。",
              projector=Path(str(projector)).name if projector else "mmproj", model=s.model_name),
            T("Start without it (pictures are then not read), or put the projector that came with this model "
              "next to it.",
              "不使用它启动（此时无法识别图片），或把随该模型提供的视觉投影文件放在它旁边。"), fix, False)


_SPLIT_NAME = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)


def wrong_split_part(s: Situation) -> Parts:
    first = _SPLIT_NAME.sub(lambda m: f"-00001-of-{m.group(2)}.gguf", s.model_path) if s.model_path else ""
    fix = {"model": first} if first and first != s.model_path else {}
    return (T("{model} is one part of a model split into several files; llama.cpp must be given the first part.",
              "{model} 是分成多个文件的模型中的一部分；llama.cpp 需要打开第一个部分。", model=s.model_name),
            T("Choose the first part ({first}) and keep all parts in the same folder.",
              "选择第一个部分（{first}），并把所有部分放在同一个文件夹中。",
              first=Path(first).name if fix else "…-00001-of-….gguf"), fix, False)


def split_part_missing(s: Situation) -> Parts:
    return (T("A part of the split model {model} is missing or damaged.", "分卷模型 {model} 的某个部分缺失或已损坏。",
              model=s.model_name),
            T("Put all parts (…-00001-of-…, …-00002-of-…, …) in the same folder; download any missing part again.",
              "把所有部分（…-00001-of-…、…-00002-of-… 等）放在同一个文件夹中；缺失的部分请重新下载。"), {}, False)


BUILDERS = {
    "wrong_split_part": wrong_split_part, "split_part_missing": split_part_missing,
    "not_gguf": not_gguf, "gguf_too_old": gguf_too_old, "gguf_too_new": gguf_too_new,
    "model_truncated": model_truncated, "model_corrupt": model_corrupt,
    "unsupported_architecture": unsupported_architecture, "unsupported_quant_type": unsupported_quant_type,
    "model_incompatible": model_incompatible, "model_not_found": model_not_found,
    "model_unreadable": model_unreadable, "mmap_failed": mmap_failed, "model_load_failed": model_load_failed,
    "projector_failed": projector_failed,
}
