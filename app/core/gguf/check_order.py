"""The order a model's checks are shown in, and the line above them: failures first, then warnings, then what
passed; the summary of a list with a failure says what failed, never "N checks passed" alone.

Among failures, the rows that say what is wrong in the model's own terms (a layer lacks a part, the last
MiB are zeros, the tokenizer is incomplete) come before the rows about the byte layout: a missing part
also shifts every later part, so the layout rows are the symptom and the model rows the cause.
"""

from __future__ import annotations

from app.core.problem import Check, Status
from app.core.text import T, Text

_STATUS_RANK = {Status.ERROR: 0, Status.WARNING: 1, Status.OK: 2}
_LAYOUT_ROWS = {"tensor_offsets", "tensor_sizes", "structure"}

_TOPICS: dict[str, Text] = {
    "path": T("the file's location", "文件位置"),
    "path_chars": T("the file's location", "文件位置"),
    "path_drive": T("the file's location", "文件位置"),
    "open": T("opening the file", "打开文件"),
    "magic": T("the file format", "文件格式"),
    "version": T("the file format", "文件格式"),
    "structure": T("the file format", "文件格式"),
    "truncation": T("the file size", "文件大小"),
    "zero_data": T("the data itself", "数据本身"),
    "tensor_offsets": T("the data layout", "数据布局"),
    "tensor_sizes": T("the data layout", "数据布局"),
    "quant_types": T("the data types", "数据类型"),
    "metadata": T("the model's settings", "模型设置"),
    "loader_metadata": T("the model's settings", "模型设置"),
    "tokenizer": T("the tokenizer", "分词器"),
    "tensor_names": T("the model's parts", "模型的组成部分"),
    "layers": T("the model's parts", "模型的组成部分"),
    "tensor_shapes": T("the model's parts", "模型的组成部分"),
    "split": T("the other files of a split model", "分卷模型的其他文件"),
    "split_first": T("the other files of a split model", "分卷模型的其他文件"),
    "sha256": T("the checksum", "校验值"),
    "engine_runs": T("the engine", "引擎"),
    "backend": T("the engine", "引擎"),
    "projector": T("the image part", "图像部分"),
}
_OTHER = T("another check", "其他检查")


def failures_first(checks: list[Check]) -> list[Check]:
    """Errors, then warnings, then passed rows; errors in model terms before layout errors; otherwise as given."""
    def key(item: tuple[int, Check]) -> tuple[int, int, int]:
        index, check = item
        layout = int(check.is_error and check.id in _LAYOUT_ROWS)
        return _STATUS_RANK.get(check.status, 2), layout, index

    return [check for _, check in sorted(enumerate(checks), key=key)]


def failed_summary(checks: list[Check]) -> Text | None:
    """"2 of 17 checks failed (the model's parts, the data layout); 15 passed." for a list with a failure,
    None when nothing failed (the list's own "N checks passed" line then stays)."""
    failed = [c for c in failures_first(checks) if c.is_error]
    if not failed:
        return None
    topics: list[Text] = []
    for check in failed:
        topic = _TOPICS.get(check.id, _OTHER)
        if topic not in topics:
            topics.append(topic)
    passed = sum(1 for c in checks if c.status is Status.OK)
    return T("{failed} of {total} checks failed ({topics_en}); {passed} passed.",
             "{total} 项检查中有 {failed} 项未通过（{topics_zh}）；{passed} 项通过。",
             failed=len(failed), total=len(checks), passed=passed,
             topics_en=", ".join(t.en for t in topics), topics_zh="、".join(t.zh for t in topics))
