"""The demo's answering copy: the verified download converted once, here, to F16, and asked a question.

Why: SmolLM2-135M's Q4_1 weights answer "What is the capital of France?" with nonsense on AVX-512 kernels (both
engines), and a Q8_0 copy too (those kernels quantize the activations to 8 bits); the same weights in F16 answer
"The capital of France is Paris." So the download (pinned SHA-256) stays as it is, llama.cpp's own quantizer writes
an F16 copy beside it (``allow_requantize``: the 4-bit weights are expanded, not improved), and the copy is used
only after the built-in engine, asked the question at temperature 0, says Paris. The verdict is kept in a record
beside the copy, per engine build and processor, so a later click asks nothing. When the copy cannot be made or
answers wrongly, the download is used and one sentence says so.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.demo import errors
from app.core.demo.answer import AnswerCheck, AskCancelled, ask_capital
from app.core.demo.errors import CopyNotUsed
from app.core.demo.source import DemoSource
from app.core.gguf.sha256 import HashCancelled, file_sha256, remember_sha256

log = logging.getLogger(__name__)

MAKE_COPY, ASK = "copy", "ask"
SPARE_BYTES = 16 << 20
STALE_PART_S = 600.0  # a live quantizer writes its part file many times a second
RECORD_SUFFIX = ".answer.json"

EmitFn = Callable[[str, int, int], None]  # (phase, bytes done, bytes total)
CancelFn = Callable[[], bool]


@dataclass(frozen=True)
class CopyOutcome:
    """The copy to open (``path`` None: open the download; ``note`` says why) and how it was judged."""

    path: Path | None
    sha256: str = ""
    size: int = 0
    check: AnswerCheck | None = None
    note: CopyNotUsed | None = None
    make_s: float = 0.0  # how long making the copy took just now (0: it was already there)


def answering_copy(original: Path, source: DemoSource, emit: EmitFn, cancel: CancelFn | None = None) -> CopyOutcome:
    """The F16 copy beside ``original`` when it answers correctly here; otherwise the reason it is not used."""
    try:
        return _answering_copy(original, source, emit, cancel)
    except OSError as error:  # the download is still there and verified: a disk error costs only the copy
        log.warning("the demo copy failed: %s", error)
        _discard(original.parent / source.copy_filename)
        reason = errors.write_failed(str(original.parent), error.strerror or str(error))
        return CopyOutcome(None, note=errors.copy_not_made(source.copy_quant, source.quant, reason))


def _answering_copy(original: Path, source: DemoSource, emit: EmitFn, cancel: CancelFn | None) -> CopyOutcome:
    copy = original.parent / source.copy_filename
    key = engine_key()
    record = _load(copy, source)
    if record is not None and record["key"] == key and not _check(record).passed:
        _discard(copy)  # asked before with this engine on this processor: asking again gives the same answer
        return CopyOutcome(None, check=_check(record), note=_wrong(source, _check(record)))
    kept = record if record is not None and _intact(copy, source, record.get("copy_sha256"), emit, cancel) else None
    if kept is not None and kept["key"] == key:
        return CopyOutcome(copy, kept["copy_sha256"], copy.stat().st_size, _check(kept))
    make_s, digest = 0.0, kept["copy_sha256"] if kept is not None else ""
    if kept is None:
        made = _make(original, copy, source, emit, cancel)
        if isinstance(made, CopyNotUsed):
            return CopyOutcome(None, note=made)
        digest, make_s = made
    emit(ASK, 0, 0)
    try:
        check = ask_capital(copy, cancel=cancel)
    except AskCancelled:
        _discard(copy)  # an unasked copy is never left to be opened
        raise errors.copy_cancelled(source.copy_quant) from None
    _store(copy, {"source_sha256": source.sha256, "copy_sha256": digest, "key": key, "check": check.to_dict(),
                  "make_s": round(make_s, 2)})
    if not check.passed:
        _discard(copy)
        return CopyOutcome(None, check=check, note=_wrong(source, check), make_s=make_s)
    return CopyOutcome(copy, digest, copy.stat().st_size, check, make_s=make_s)


def engine_key() -> str:
    """The built-in engine's build and this processor: the answer of a 135M model at temperature 0 follows both."""
    from app.core.engine.isa_cache import cpu_fingerprint
    from app.core.engine.selftest import build_fingerprint

    return f"{build_fingerprint('embedded')}:{cpu_fingerprint()}"


def record_path(copy: Path) -> Path:
    return copy.with_name(copy.name + RECORD_SUFFIX)


def _make(original: Path, copy: Path, source: DemoSource, emit: EmitFn,
          cancel: CancelFn | None) -> tuple[str, float] | CopyNotUsed:
    """Write the copy with llama.cpp's quantizer (beside it, then renamed); (its SHA-256, seconds) or why not."""
    from app.core.gguf.quantize import CANCELLED, QuantizeError, quantize

    needed = source.copy_size + SPARE_BYTES
    free = shutil.disk_usage(copy.parent).free
    if free < needed:
        return errors.copy_no_space(source.copy_quant, source.quant, str(copy.parent), needed, free)
    _discard(copy)
    _remove_stale_parts(copy)
    started = time.monotonic()
    emit(MAKE_COPY, 0, source.copy_size)
    try:
        quantize(original, source.copy_quant, copy, threads=os.cpu_count() or 1, allow_requantize=True,
                 progress=lambda done: emit(MAKE_COPY, done, source.copy_size), cancel=cancel)
    except QuantizeError as error:
        if error.kind == CANCELLED:
            raise errors.copy_cancelled(source.copy_quant) from None
        log.warning("the demo copy was not made: %s %s", error.message.render("en"), list(error.evidence))
        return errors.copy_not_made(source.copy_quant, source.quant, error)
    seconds = time.monotonic() - started
    try:
        digest = file_sha256(copy, lambda done, total: emit(MAKE_COPY, done, total), cancel, use_cache=False)
    except HashCancelled:
        _discard(copy)
        raise errors.copy_cancelled(source.copy_quant) from None
    remember_sha256(copy, digest)
    return digest, seconds


def _intact(copy: Path, source: DemoSource, digest: str | None, emit: EmitFn, cancel: CancelFn | None) -> bool:
    """The copy is the one the record judged (the sha256 cache makes this free for an unchanged file)."""
    if not digest or not copy.is_file():
        return False
    try:
        return file_sha256(copy, lambda done, total: emit(MAKE_COPY, done, total), cancel) == digest
    except HashCancelled:
        raise errors.copy_cancelled(source.copy_quant) from None


def _load(copy: Path, source: DemoSource) -> dict | None:
    try:
        record = read_json(record_path(copy))
        _check(record)
        if record["source_sha256"] == source.sha256 and isinstance(record["key"], str):
            return record
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("the demo copy's record is unreadable, so the copy is made and asked again: %s", error)
    return None


def _store(copy: Path, record: dict) -> None:
    try:
        write_json_atomic(record_path(copy), record)
    except OSError as error:  # the verdict stands for this run; the next click asks again
        log.warning("the demo copy's record could not be written: %s", error)


def _check(record: dict) -> AnswerCheck:
    check = record["check"]
    return AnswerCheck(check["question"], check["answer"], float(check["seconds"]), check.get("detail", ""),
                       check.get("tokens_per_s"))


def _wrong(source: DemoSource, check: AnswerCheck) -> CopyNotUsed:
    if check.answer is None:
        return errors.copy_no_answer(source.copy_quant, source.quant, check.detail)
    return errors.copy_wrong(source.copy_quant, source.quant, check.question, check.answer)


def _remove_stale_parts(copy: Path) -> None:
    """Half-written copies of a run that was killed (the quantizer's ``.NAME.PID.part``; a live one is younger)."""
    for part in copy.parent.glob(f".{copy.name}.*.part"):
        try:
            if time.time() - part.stat().st_mtime > STALE_PART_S:
                part.unlink()
        except OSError as error:
            log.warning("a stale part of the demo copy was not removed: %s", error)


def _discard(copy: Path) -> None:
    try:
        copy.unlink(missing_ok=True)
    except OSError as error:
        log.warning("the demo copy %s could not be removed: %s", copy, error)
