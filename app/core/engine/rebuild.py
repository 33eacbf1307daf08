"""The "rebuild the engine for this processor" fix: the processor is probed again, the built-in engine is built
from source for what runs, installed, and proven by the engine self-test. It runs in a child process (a compile
takes minutes and must never block a window or die with it) and can be cancelled.

With ``gpu`` ("cuda" or "vulkan") the same rebuild adds that graphics-card backend (``-DGGML_CUDA=on`` /
``-DGGML_VULKAN=on``), when its compiler is found here (``gpu_build``)."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from app.core.engine import gpu_build, isa_cache, selftest
from app.core.engine.build import ROOT
from app.core.engine.selftest import EngineCheck
from app.core.problem import UserError
from app.core.text import T, Text

log = logging.getLogger(__name__)
EMBEDDED_PACKAGE = "llama-cpp-python"


class Phase(StrEnum):
    PROBING = "probing"
    BUILDING = "building"
    TESTING = "testing"


@dataclass(frozen=True)
class RebuildProgress:
    phase: Phase
    done: int = 0
    total: int = 0

    @property
    def fraction(self) -> float | None:
        return self.done / self.total if self.total else None


def cannot_rebuild_reason(gpu: str | None = None) -> Text | None:
    """Why this installation cannot compile its engine, or (``gpu``) that backend of it; None when it can."""
    if getattr(sys, "frozen", False):
        return T("This installed app cannot rebuild its engine.", "这个已安装的应用无法重新构建引擎。")
    if not any(shutil.which(cc) for cc in ("cc", "gcc", "clang", "cl")):
        return T("No C++ compiler was found on this computer, so the engine cannot be rebuilt here.",
                 "这台电脑上没有找到 C++ 编译器，所以无法在这里重新构建引擎。")
    if gpu is not None and gpu_build.gpu_build(gpu) is None:
        return no_gpu_compiler_reason()
    return None


def no_gpu_compiler_reason() -> Text:
    """Why the built-in engine cannot be rebuilt for the graphics card here."""
    return T("The built-in engine cannot be rebuilt for the graphics card here: neither NVIDIA's CUDA toolkit nor "
             "the Vulkan SDK is installed. Install one of them, then try again, or use a llama-server built for "
             "your graphics card.",
             "这里无法为显卡重新构建内置引擎：没有安装 NVIDIA 的 CUDA 工具包，也没有安装 Vulkan SDK。"
             "请安装其中之一后重试，或改用为你的显卡构建的 llama-server。")


def rebuild_command(gpu: str | None = None) -> list[str]:
    """The child process the rebuild runs: the set-up's engine build, forced, for the built-in engine only."""
    argv = [sys.executable, "-m", "app.core.engine.build", "--force", "--only", EMBEDDED_PACKAGE, "--progress"]
    return argv + (["--gpu", gpu] if gpu else [])


def rebuild_embedded(progress: Callable[[RebuildProgress], None] = lambda p: None,
                     cancel: Callable[[], bool] = lambda: False, gpu: str | None = None) -> EngineCheck:
    """Rebuild, install and self-test the built-in engine (``gpu``: with that graphics-card backend); raises
    UserError with the cause when it cannot."""
    reason = cannot_rebuild_reason(gpu)
    if reason is not None:
        raise UserError(reason, T("Use the other engine: choose a llama-server file in Settings.",
                                  "请改用另一个引擎：在设置中选择 llama-server 文件。"))
    progress(RebuildProgress(Phase.PROBING))
    isa_cache.current_report(refresh=True)
    _build_in_child(progress, cancel, rebuild_command(gpu))
    progress(RebuildProgress(Phase.TESTING))
    check = selftest.run_embedded_check(use_cache=False)
    if not check.ok:
        first = check.failed()[0]
        raise UserError(T("The rebuilt engine still cannot run a {quant} model here: {detail}.",
                          "重新构建的引擎仍然无法在这里运行 {quant} 模型：{detail}。",
                          quant=first.quant, detail=first.detail),
                        T("Use the other engine: choose a llama-server file in Settings.",
                          "请改用另一个引擎：在设置中选择 llama-server 文件。"))
    return check


def _build_in_child(progress: Callable[[RebuildProgress], None], cancel: Callable[[], bool],
                    argv: list[str]) -> None:
    stop_watch = threading.Event()
    tail: list[str] = []
    with subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=os.name != "nt") as child:  # its pipe is closed when it has ended
        threading.Thread(target=_kill_when_cancelled, args=(child, cancel, stop_watch), daemon=True).start()
        assert child.stdout is not None
        for line in child.stdout:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "progress" and parts[1].isdigit() and parts[2].isdigit():
                progress(RebuildProgress(Phase.BUILDING, int(parts[1]), int(parts[2])))
            else:
                tail = (tail + [line.rstrip()])[-20:]
        returncode = child.wait()
    stop_watch.set()
    if cancel():
        raise UserError(T("The engine rebuild was cancelled; the engine is unchanged.",
                          "已取消重新构建引擎；引擎没有改变。"),
                        T("Start the rebuild again when you have a few minutes.", "有几分钟空闲时再重新构建。"))
    if returncode != 0:
        raise UserError(T("Rebuilding the engine failed.", "重新构建引擎失败。"),
                        T("Check that this computer is online (the source is downloaded), then try again; the log "
                          "lines below say more.",
                          "请确认这台电脑已联网（需要下载源代码），然后重试；下面的日志行有更多信息。"),
                        evidence=tuple(tail))


def _kill_when_cancelled(child: subprocess.Popen, cancel: Callable[[], bool], stop: threading.Event) -> None:
    while not stop.wait(0.2):
        if cancel():
            log.info("engine rebuild cancelled: stopping pid %s", child.pid)
            try:
                if os.name == "nt":
                    child.kill()
                else:
                    os.killpg(child.pid, signal.SIGKILL)
            except OSError as exc:
                log.warning("could not stop the rebuild: %s", exc)
            return
