"""Split models: ``name-00001-of-00003.gguf`` shards plus ``split.*`` keys. All parts must be present
and agree; llama.cpp is pointed at the first one and finds the others itself."""

from __future__ import annotations

from pathlib import Path

from app.core.gguf.errors import GGUFError
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.reader import read_raw
from app.core.gguf.shard_names import shard_paths
from app.core.problem import Check, Fix, Status, fix_action
from app.core.text import T


def _shard_count_from_header(shard: Path) -> tuple[int | None, int]:
    raw = read_raw(shard)
    count = raw.metadata.get("split.count")
    return (count if isinstance(count, int) else None), len(raw.tensors)


def _missing_error(missing: list[Path], count: int) -> Check:
    names = ", ".join(p.name for p in missing)
    return Check("split", Status.ERROR,
                 T("This model is split into {count} parts and {n} are missing: {names}.",
                   "该模型分为 {count} 个部分，缺少 {n} 个：{names}。", count=count, n=len(missing), names=names),
                 T("Download the missing parts into the same folder as the others.",
                   "请把缺少的部分下载到与其他部分相同的文件夹中。"),
                 evidence=tuple(str(p) for p in missing),
                 action=fix_action(Fix.DOWNLOAD_MISSING_SHARDS, missing=[str(p) for p in missing]))


def _compare_shards(shards: list[Path], count: int, info: ModelInfo, path: Path) -> Check | None:
    total_tensors = 0
    for shard in shards:
        try:
            if shard == path:
                shard_count, n_tensors = info.split_count, len(info.tensors)
            else:
                shard_count, n_tensors = _shard_count_from_header(shard)
        except GGUFError as exc:
            return Check("split", Status.ERROR, T("Part {name} cannot be read: {error}", "无法读取部分 {name}：{error}",
                                                 name=shard.name, error=exc.message),
                         exc.next_step, evidence=(str(shard),))
        if shard_count is not None and shard_count != count:
            return Check("split", Status.ERROR,
                         T("Part {name} says the model has {other} parts, but its name says {count}: the parts "
                           "come from different downloads.",
                           "部分 {name} 表示模型共有 {other} 个部分，但文件名表示 {count} 个：这些部分来自不同的下载。",
                           name=shard.name, other=shard_count, count=count),
                         T("Download all parts of the same model again.", "请重新下载同一模型的所有部分。"),
                         evidence=(str(shard),))
        total_tensors += n_tensors
    expected = info.split_tensors_count
    if expected is not None and expected != total_tensors:
        return Check("split", Status.ERROR,
                     T("The parts hold {found} tensors but the model needs {expected}.",
                       "各部分共含 {found} 个张量，但模型需要 {expected} 个。",
                       found=total_tensors, expected=expected),
                     T("Download all parts of the same model again.", "请重新下载同一模型的所有部分。"))
    return None


def split_checks(path: str | Path, info: ModelInfo) -> list[Check]:
    path = Path(path)
    shards = shard_paths(path, None)
    if shards is None and (info.split_count or 0) > 1:
        return [Check("split", Status.ERROR,
                      T("The file is part {no} of a {count}-part model, but its name does not follow the "
                        "-0000N-of-0000M.gguf pattern llama.cpp needs to find the other parts.",
                        "该文件是 {count} 部分模型中的第 {no} 部分，但文件名不符合 llama.cpp 查找其他部分所需的 "
                        "-0000N-of-0000M.gguf 格式。",
                        no=(info.split_no or 0) + 1, count=info.split_count),
                      T("Restore the original file names of all parts.", "请恢复所有部分的原始文件名。"))]
    if shards is None:
        return [Check("split", Status.OK, T("The model is a single file.", "模型是单个文件。"))]
    count = len(shards)
    if info.split_count is not None and info.split_count != count:
        return [Check("split", Status.ERROR,
                      T("The file name says {count} parts but the file itself says {other}.",
                        "文件名表示共 {count} 个部分，但文件本身表示 {other} 个。",
                        count=count, other=info.split_count),
                      T("Restore the original file names of all parts.", "请恢复所有部分的原始文件名。"))]
    missing = [p for p in shards if not p.is_file()]
    if missing:
        return [_missing_error(missing, count)]
    problem = _compare_shards(shards, count, info, path)
    if problem:
        return [problem]
    checks = [Check("split", Status.OK, T("All {count} parts of the split model are present.",
                                          "分卷模型的全部 {count} 个部分都在。", count=count))]
    if path != shards[0]:
        checks.append(Check("split_first", Status.WARNING,
                            T("This is part {no} of {count}; the model is loaded from part 1 ({first}).",
                              "这是 {count} 个部分中的第 {no} 部分；模型需要从第 1 部分（{first}）加载。",
                              no=shards.index(path) + 1, count=count, first=shards[0].name),
                            T("Use the first part; llama.cpp finds the others itself.",
                              "请使用第一部分；llama.cpp 会自动找到其余部分。"),
                            action=fix_action(Fix.USE_FIRST_SHARD, path=str(shards[0]))))
    return checks
