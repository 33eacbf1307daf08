"""validate(path) -> ValidationReport: every check on a model file, each a typed ok/warning/error."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.gguf.checks import content_checks
from app.core.gguf.errors import GGUFError
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.origin_hash import origin_sha256
from app.core.gguf.path_checks import path_checks
from app.core.gguf.reader import read_model_info
from app.core.gguf.sha256 import (
    CancelFn,
    HashCancelled,
    ProgressFn,
    cached_sha256,
    cached_zero_runs,
    expected_sha256_for,
    hash_and_scan,
    normalize_digest,
)
from app.core.gguf.split import split_checks
from app.core.gguf.zero_check import zero_data_check
from app.core.gguf.zero_runs import ZeroRun
from app.core.problem import Check, Fix, FixAction, Status, worst_status
from app.core.text import T, Text


@dataclass
class ValidationReport:
    info: ModelInfo | None
    checks: list[Check] = field(default_factory=list)
    sha256: str | None = None

    @property
    def status(self) -> Status:
        return worst_status(self.checks)

    @property
    def has_errors(self) -> bool:
        return any(c.is_error for c in self.checks)

    def check(self, check_id: str) -> Check | None:
        return next((c for c in self.checks if c.id == check_id), None)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "sha256": self.sha256,
            "model": self.info.to_dict() if self.info else None,
            "checks": [c.to_dict(lang) for c in self.checks],
        }


def _error_check(error: GGUFError) -> Check:
    evidence = (f"offset={error.offset}",) if error.offset is not None else ()
    return Check(error.check_id, Status.ERROR, error.message, error.next_step, evidence + error.evidence)


@dataclass
class _Hashed:
    check: Check | None = None
    digest: str | None = None
    zero_runs: list[ZeroRun] | None = None  # from a full read of the file


def _expected(path: Path, typed: str | None) -> tuple[str | None, Text, bool] | Check:
    """(expected digest, where it comes from, whether it asks for a hash pass) or the row for a mistyped one.
    The user's value and a checksum file beside the model ask for the pass; the name the file is stored under
    (Hugging Face's cache, Ollama) is compared whenever a pass runs."""
    if typed is not None:
        normalized = normalize_digest(typed)
        if normalized is None:
            return Check("sha256", Status.ERROR, T("'{value}' is not a SHA-256 checksum (64 hex characters).",
                                                   "“{value}”不是 SHA-256 校验值（64 个十六进制字符）。",
                                                   value=typed),
                         T("Copy the checksum again from the download page.", "请从下载页面重新复制校验值。"))
        return normalized, T("you", "您"), True
    sibling = expected_sha256_for(path)
    if sibling:
        return sibling[0], T("{file}", "{file}", file=Path(sibling[1]).name), True
    origin = origin_sha256(path)
    if origin:
        return origin[0], origin[1], False
    return None, T("you", "您"), False


def _hash(path: Path, typed: str | None, compute: bool, progress: ProgressFn | None,
          cancel: CancelFn | None) -> _Hashed:
    expected = _expected(path, typed)
    if isinstance(expected, Check):
        return _Hashed(expected)
    digest, source, asks = expected
    found = _Hashed(None, cached_sha256(path), cached_zero_runs(path))
    if found.digest is None and (compute or asks):
        try:
            found.digest, found.zero_runs = hash_and_scan(path, progress, cancel)
        except HashCancelled:
            return _Hashed(Check("sha256", Status.WARNING, T("The checksum was cancelled.", "校验已取消。")))
        except OSError as exc:
            return _Hashed(Check("sha256", Status.ERROR, T("Reading the file for its checksum failed: {error}",
                                                           "读取文件计算校验值失败：{error}",
                                                           error=exc.strerror or str(exc))))
    if found.digest is not None:
        found.check = _verdict(found.digest, digest, source)
    return found


def _verdict(digest: str, expected: str | None, source: Text) -> Check:
    if expected is None:
        return Check("sha256", Status.OK, T("SHA-256 {digest} (no expected value to compare with).",
                                            "SHA-256 为 {digest}（没有可对比的预期值）。", digest=digest),
                     evidence=(digest,))
    if digest == expected:
        return Check("sha256", Status.OK, T("SHA-256 matches the value from {source}.",
                                            "SHA-256 与 {source} 提供的值一致。", source=source),
                     evidence=(digest,))
    return Check("sha256", Status.ERROR,
                 T("SHA-256 does not match: the file is {digest}, expected {expected} (from {source}). The file is "
                   "damaged or a different one.",
                   "SHA-256 不一致：文件为 {digest}，预期为 {expected}（来自 {source}）。文件已损坏或不是同一个文件。",
                   digest=digest, expected=expected, source=source),
                 T("Download the file again.", "请重新下载该文件。"), evidence=(digest, expected),
                 action=FixAction(Fix.REDOWNLOAD))


LAYOUT_IDS = ("truncation", "tensor_offsets", "tensor_sizes")


def _layout_failed(checks: list[Check]) -> bool:
    return any(c.is_error for c in checks if c.id in LAYOUT_IDS)


def _not_hashed(path: Path, typed: str | None) -> _Hashed:
    """The checksum of a file whose structure already failed: a cached one is still compared, none is computed (a
    row says so only when the user asked for one: a value, or a checksum file beside the model)."""
    expected = _expected(path, typed)
    if isinstance(expected, Check):
        return _Hashed(expected)
    digest, source, asks = expected
    cached = cached_sha256(path)
    if cached is not None:
        return _Hashed(_verdict(cached, digest, source), cached)
    if not asks:
        return _Hashed()
    return _Hashed(Check("sha256", Status.WARNING,
                         T("The checksum was not computed: the checks above already found the file damaged.",
                           "未计算校验值：上面的检查已经发现文件损坏。")))


def _with_zero_row(checks: list[Check], info: ModelInfo, runs: list[ZeroRun] | None) -> list[Check]:
    """The zero-data row after the layout rows; none while the layout itself is broken (those rows say so)."""
    if _layout_failed(checks):
        return checks
    row = zero_data_check(info, runs)
    if row is None:
        return checks
    after = max((i for i, c in enumerate(checks) if c.id in LAYOUT_IDS), default=len(checks) - 1)
    return checks[:after + 1] + [row] + checks[after + 1:]


def validate(path: str | os.PathLike[str], *, supported_types: set[int] | None = None,
             expected_sha256: str | None = None, compute_sha256: bool = False,
             progress: ProgressFn | None = None, cancel: CancelFn | None = None) -> ValidationReport:
    """Run every check on ``path``. Never raises for a bad file: problems come back as checks.

    ``supported_types``: type ids the selected backend build loads (None = any current type).
    The sha256 is computed when asked to, or when an expected value is given; a cached value is
    always used. ``progress(done, total)`` and ``cancel()`` apply to that hashing. The zero-data row uses
    the zero runs that hashing found (the whole file read), else reads a few KiB per tensor.
    """
    file = Path(path)
    report = ValidationReport(info=None, checks=path_checks(file))
    if any(c.id == "path" and c.is_error for c in report.checks):
        return report
    try:
        report.info = read_model_info(file)
    except GGUFError as error:
        report.checks.append(_error_check(error))
        return report
    content = content_checks(report.info, supported_types)
    if _layout_failed(content):  # already known damaged: reading it all for a checksum would only take time
        hashed = _not_hashed(file, expected_sha256)
    else:
        hashed = _hash(file, expected_sha256, compute_sha256, progress, cancel)
    report.sha256 = hashed.digest
    report.checks += _with_zero_row(content, report.info, hashed.zero_runs)
    report.checks += split_checks(file, report.info)
    if hashed.check is not None:
        report.checks.append(hashed.check)
    return report
