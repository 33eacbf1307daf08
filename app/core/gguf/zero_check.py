"""The doctor's "zero_data" row: a download that stopped early (zero tail) or lost segments (zero holes).

llama.cpp loads such a file without complaint and the model answers nonsense, so this row is where the app
is stricter than the loader. The runs come from the SHA-256 pass when it read the whole file (every run,
exactly), else from the fast probes (``zero_runs.probe_zero_runs``); ``zero_layout`` judges each one.
"""

from __future__ import annotations

import logging

from app.core.gguf.model_info import ModelInfo
from app.core.gguf.zero_layout import ZeroFinding, findings
from app.core.gguf.zero_runs import MIN_RUN, MIN_TAIL, ZeroRun, probe_zero_runs
from app.core.problem import Check, Fix, Status, fix_action
from app.core.text import T, Text, human_bytes

logger = logging.getLogger(__name__)

CHECK_ID = "zero_data"
_MAX_EVIDENCE = 6
REDOWNLOAD_ZEROS = T("Download the file again (or resume the download, if your browser or download tool still offers "
                     "to).", "请重新下载该文件（如果浏览器或下载工具仍可继续这次下载，也可以继续下载）。")


def _damage_sentence(finding: ZeroFinding, file_size: int) -> Text:
    run = finding.run
    if finding.at_end:
        return T("The last {size} of this file are zeros: the download stopped before the end.",
                 "该文件最后 {size} 全是零：下载在结束前中断了。", size=human_bytes(file_size - run.start))
    return T("{size} in the middle of this file are zeros (from {at} on): part of the download never arrived.",
             "该文件中间有 {size} 全是零（从 {at} 处开始）：下载的一部分没有到达。",
             size=human_bytes(run.length), at=human_bytes(run.start))


def _ok_sentence(whole_file: bool, probes: int) -> Text:
    if whole_file:
        return T("The model's data has no zero-filled gaps (the whole file was read).",
                 "模型数据中没有被零填充的缺口（已读取整个文件）。")
    return T("The model's data has no zero-filled gaps where it was sampled ({n} places, the end of every part "
             "among them).", "在抽查的位置（{n} 处，包括每个部分的末尾）模型数据中没有被零填充的缺口。", n=probes)


def zero_data_check(info: ModelInfo, runs: list[ZeroRun] | None = None) -> Check | None:
    """The row for ``info``'s file. ``runs``: every zero run from a full read (the SHA-256 pass), or None to
    probe the file now. None when the file cannot be read (the other rows say why)."""
    whole_file, probes = runs is not None, 0
    if runs is None:
        ends = [info.data_offset + t.offset + t.n_bytes for t in info.tensors if t.n_bytes]
        try:
            runs, probes = probe_zero_runs(info.path, info.data_offset, ends)
        except OSError as error:
            logger.warning("zero-data probes of %s failed: %s", info.path, error)
            return None
    judged = findings(runs, info)
    damaged = [f for f in judged if f.damaged]
    method = ("whole file read" if whole_file else f"{probes} probes of 4 KiB")
    method += f"; zero runs of >= {MIN_RUN:,} bytes, >= {MIN_TAIL:,} at the end"
    evidence = tuple([method] + [f.evidence() for f in (damaged or judged)[:_MAX_EVIDENCE]])
    if not damaged:
        return Check(CHECK_ID, Status.OK, _ok_sentence(whole_file, probes), evidence=evidence)
    first = next((f for f in damaged if f.at_end), damaged[0])
    missing = sum(f.run.length for f in damaged)
    return Check(CHECK_ID, Status.ERROR, _damage_sentence(first, info.file_size), REDOWNLOAD_ZEROS, evidence,
                 fix_action(Fix.REDOWNLOAD, missing_bytes=missing))
