"""The sentences a download ends with when it cannot finish: each one sentence and a next step, in both languages."""

from __future__ import annotations

from pathlib import Path

from app.core.hub.errors import HubError, HubFault, where_text
from app.core.hub.source import HubAccess
from app.core.text import T, Text, human_bytes


def joined(first: Text, second: Text) -> Text:
    """Two sentences as one Text (each language rendered apart)."""
    return T("{a} {b}", "{a_zh}{b_zh}", a=first.render("en"), b=second.render("en"),
             a_zh=first.render("zh"), b_zh=second.render("zh"))


def no_space(name: str, folder: Path, need: int, size: int, margin: int, free: int) -> HubError:
    return HubError(T("Downloading {name} needs {need} free in {folder} ({size} for the model and {margin} to "
                      "spare), but only {free} is free.",
                      "下载 {name} 需要 {folder} 所在磁盘有 {need} 可用空间（模型 {size}，另留 {margin} 余量），"
                      "但只有 {free} 可用。", name=name, folder=str(folder), need=human_bytes(need),
                      size=human_bytes(size), margin=human_bytes(margin), free=human_bytes(free)),
                    T("Free at least {short} on that disk, then download again.",
                      "请在该磁盘上至少腾出 {short}，然后重新下载。", short=human_bytes(need - free)),
                    kind=HubFault.SERVER)


def disk_write_failed(name: str, folder: Path, detail: str) -> HubError:
    return HubError(T("Writing {name} in {folder} failed ({detail}); the partial download was removed.",
                      "在 {folder} 中写入 {name} 失败（{detail}）；已删除未下载完的部分。",
                      name=name, folder=str(folder), detail=detail),
                    T("Free some space on that disk, or check that the folder can be written, then download again.",
                      "请在该磁盘上腾出空间，或检查该文件夹是否可写，然后重新下载。"), kind=HubFault.SERVER)


def hash_mismatch(name: str, expected: str, got: str) -> HubError:
    return HubError(T("{name} does not match the SHA-256 the Hub publishes for it (expected {expected}, got {got}), "
                      "so it was not kept; the partial download was removed.",
                      "{name} 与 Hub 公布的 SHA-256 不一致（应为 {expected}，实际为 {got}），因此未保留；"
                      "已删除下载的部分。", name=name, expected=expected[:16] + "…", got=got[:16] + "…"),
                    T("Download it again; if the same happens, choose another source.",
                      "请重新下载；如果仍然如此，请选择其他来源。"), (f"expected {expected}", f"got {got}"),
                    kind=HubFault.BAD_ANSWER)


def size_mismatch(name: str, expected: int, got: int) -> HubError:
    return HubError(T("{name} arrived with {got} bytes where the Hub lists {expected}, so it was not kept; the "
                      "partial download was removed.",
                      "{name} 下载到 {got} 字节，而 Hub 列出的是 {expected} 字节，因此未保留；已删除下载的部分。",
                      name=name, got=got, expected=expected),
                    T("Download it again; if the same happens, choose another source.",
                      "请重新下载；如果仍然如此，请选择其他来源。"), kind=HubFault.BAD_ANSWER)


def missing_parts(name: str, have: int, count: int) -> HubError:
    return HubError(T("Only {have} of the {count} parts of {name} are in the repository.",
                      "仓库中只有 {name} 的 {count} 个分卷中的 {have} 个。", have=have, count=count, name=name),
                    T("Choose another file.", "请选择其他文件。"), kind=HubFault.NOT_FOUND)


def no_size(name: str) -> HubError:
    return HubError(T("The Hub gives no size for {name}, so its download cannot be checked.",
                      "Hub 没有给出 {name} 的大小，因此无法校验其下载。", name=name),
                    T("Choose another file, or another source.", "请选择其他文件或其他来源。"),
                    kind=HubFault.BAD_ANSWER)


def kept(error: HubError, done: int, total: int) -> HubError:
    """A network failure that leaves the partial file for the next try: the sentence says so."""
    if done <= 0:
        return error
    note = T("The {done} of {total} downloaded so far are kept: downloading again continues from there.",
             "已下载的 {done}（共 {total}）已保留：重新下载会从那里继续。", done=human_bytes(done),
             total=human_bytes(total))
    step = joined(error.next_step, note) if error.next_step is not None else note
    return HubError(error.message, step, error.evidence, kind=error.kind, retry_after_s=error.retry_after_s,
                    status=error.status)


def unverified(names: list[str]) -> Text:
    """Said before and after downloading files the Hub publishes no SHA-256 for."""
    return T("The Hub publishes no SHA-256 for {names}, so only its size can be checked after the download.",
             "Hub 没有公布 {names} 的 SHA-256，因此下载后只能核对其大小。", names=", ".join(names))


def connection_lost(access: HubAccess, name: str, detail: str) -> HubError:
    """The connection broke during the file's bytes (and trying again did not help)."""
    where = where_text(access)
    return HubError(T("The connection to {where} broke while downloading {name} ({detail}).",
                      "下载 {name} 时与 {where_zh} 的连接中断（{detail}）。", where=where.render("en"),
                      where_zh=where.render("zh"), name=name, detail=detail),
                    T("Check the internet connection, then download again.", "请检查网络连接，然后重新下载。"),
                    kind=HubFault.UNREACHABLE)


def busy(name: str) -> HubError:
    return HubError(T("{name} is already being downloaded.", "{name} 已在下载中。", name=name),
                    T("Wait for that download to finish, or pause it first.", "请等待该下载完成，或先暂停它。"),
                    kind=HubFault.SERVER)
