"""Sentences and fixes for CUDA failures (cuda_signatures.py), and the silent CPU fallback of a CUDA 13 build on a
card below compute capability 7.5.

The driver numbers come from app/core/launch/cuda_facts.py (NVIDIA's table). The fix as data: switch to the
built-in engine when an external llama-server failed (a setting the app applies); the next step names the driver
version to install and the llama.cpp build that fits instead (the CUDA 12 or Vulkan build).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.core.diagnosis.situation import Situation
from app.core.launch.cuda_facts import MIN_DRIVER_BRANCH, CardFacts, card_too_old
from app.core.text import T, Text

Parts = tuple[Text, Text, dict, bool]
BUILTIN = "embedded"


def _switch_to_builtin(s: Situation) -> dict:
    return {"backend": BUILTIN} if s.backend == "llama-server" else {}


def _build_major(s: Situation) -> int | None:
    """The build's CUDA major version where the log names its runtime library (libcudart.so.12, cudart64_13.dll)."""
    lib = s.group("lib") or ""
    match = re.search(r"_(\d+)\.dll$|\.so\.(\d+)", lib, re.IGNORECASE)
    return int(match.group(1) or match.group(2)) if match else None


def _driver_step() -> Text:
    return T("Update the NVIDIA driver (version {cuda12} or newer for a CUDA 12 build of llama.cpp, {cuda13} or "
             "newer for CUDA 13), or use the CUDA 12 or Vulkan build of llama.cpp.",
             "更新 NVIDIA 驱动（CUDA 12 版 llama.cpp 需要 {cuda12} 或更新版本，CUDA 13 版需要 {cuda13} 或更新版本），"
             "或改用 CUDA 12 或 Vulkan 版本的 llama.cpp。",
             cuda12=MIN_DRIVER_BRANCH[12], cuda13=MIN_DRIVER_BRANCH[13])


def cuda_driver_too_old(s: Situation) -> Parts:
    return (T("The NVIDIA driver is older than the CUDA version this llama.cpp build was made with, so the graphics "
              "card could not be used.",
              "NVIDIA 驱动比这个 llama.cpp 版本所用的 CUDA 版本旧，因此无法使用显卡。"),
            _driver_step(), _switch_to_builtin(s), False)


def cuda_card_unsupported(s: Situation) -> Parts:
    return (T("This llama.cpp build has no CUDA code for this graphics card (its compute capability is older or newer "
              "than the ones the build was made for).",
              "这个 llama.cpp 版本没有适用于这块显卡的 CUDA 代码（显卡的计算能力不在该版本支持的范围内）。"),
            T("Use the llama.cpp build made for this card: the CUDA 12 build for cards older than compute capability "
              "7.5 (GTX 10-series and older), or the Vulkan build.",
              "改用适合这块显卡的 llama.cpp 版本：计算能力低于 7.5 的显卡（GTX 10 系列及更早）用 CUDA 12 版本，"
              "或改用 Vulkan 版本。"),
            _switch_to_builtin(s), False)


def cuda_no_device(s: Situation) -> Parts:
    return (T("CUDA found no NVIDIA graphics card: the driver is not installed or not loaded, or the card is hidden "
              "from this program (CUDA_VISIBLE_DEVICES).",
              "CUDA 没有找到 NVIDIA 显卡：驱动没有安装或没有加载，或者显卡对本程序不可见（CUDA_VISIBLE_DEVICES）。"),
            T("Install or reinstall the NVIDIA driver and restart the computer; on a computer without an NVIDIA card, "
              "use the CPU or Vulkan build of llama.cpp.",
              "安装或重新安装 NVIDIA 驱动并重启电脑；如果电脑没有 NVIDIA 显卡，"
              "请改用 CPU 或 Vulkan 版本的 llama.cpp。"),
            _switch_to_builtin(s), False)


def cuda_init_failed(s: Situation) -> Parts:
    reason = (s.group("reason") or "").strip()[:200] or "?"
    return (T("CUDA could not start ({reason}), so the graphics card could not be used.",
              "CUDA 无法启动（{reason}），因此无法使用显卡。", reason=reason),
            T("Restart the computer (a driver update needs it); if that does not help, reinstall the NVIDIA driver.",
              "重启电脑（驱动更新后需要重启）；如果仍然不行，请重新安装 NVIDIA 驱动。"),
            _switch_to_builtin(s), False)


def cuda_runtime_missing(s: Situation) -> Parts:
    lib = s.group("lib") or "?"
    major = _build_major(s)
    message = T("The CUDA runtime library {lib} that this llama.cpp build needs is missing.",
                "缺少这个 llama.cpp 版本需要的 CUDA 运行库 {lib}。", lib=lib)
    if lib.lower().endswith(".dll"):
        version = "12.4" if major == 12 else f"{major}.x" if major else "12.4"
        hint = T("Download cudart-llama-bin-win-cuda-{version}-x64.zip from the same llama.cpp release and unpack it "
                 "into the folder of llama-server.exe, or use the Vulkan build.",
                 "从同一个 llama.cpp 发布页下载 cudart-llama-bin-win-cuda-{version}-x64.zip，解压到 llama-server.exe "
                 "所在的文件夹；或改用 Vulkan 版本。", version=version)
    else:
        hint = T("Install NVIDIA's CUDA {major} runtime libraries (cudart and cuBLAS), or use the Vulkan build.",
                 "安装 NVIDIA 的 CUDA {major} 运行库（cudart 和 cuBLAS），或改用 Vulkan 版本。",
                 major=major or "12")
    return message, hint, _switch_to_builtin(s), False


BUILDERS = {
    "cuda_driver_too_old": cuda_driver_too_old, "cuda_card_unsupported": cuda_card_unsupported,
    "cuda_no_device": cuda_no_device, "cuda_init_failed": cuda_init_failed,
    "cuda_runtime_missing": cuda_runtime_missing,
}

# llama.cpp's lines that prove the CUDA backend is in use (ggml-backend-reg.cpp's load_backend, ggml_cuda_init's list)
_CUDA_IN_USE = re.compile(r"load_backend: loaded CUDA backend|ggml_cuda_init: found [1-9]\d* CUDA devices",
                          re.IGNORECASE)


def cuda13_on_old_card(card: CardFacts, build_cuda_version: str | None,
                       log_lines: Iterable[str]) -> tuple[Text, Text] | None:
    """A CUDA 13 build on a card below compute capability 7.5 runs on the processor without failing
    (altic-dev/FluidVoice#988: "on a GTX 1070 (CC 6.1) `ggml-cuda.dll` never loads"). Said only when all three
    agree: NVML's compute capability, the build's CUDA version, and a log without any line of CUDA in use.
    ("warning: no usable GPU found" alone proves nothing: ggml-org/llama.cpp#22748 shows it with the CUDA backend
    loaded and in use.)"""
    major = re.match(r"\s*(\d+)", build_cuda_version or "")
    if major is None or int(major.group(1)) != 13 or not card_too_old(card, 13):
        return None
    if any(_CUDA_IN_USE.search(line) for line in log_lines):
        return None
    return (T("The model runs on the processor: this llama.cpp is a CUDA 13 build, and CUDA 13 does not support the "
              "{card} (compute capability {cc}; it needs 7.5 or newer).",
              "模型正在处理器上运行：这个 llama.cpp 是 CUDA 13 版本，而 CUDA 13 不支持 {card}（计算能力 {cc}，"
              "需要 7.5 或更高）。", card=card.name, cc=card.compute_capability or "?"),
            T("Use the CUDA 12 build of the same llama.cpp release (llama-bNNNN-bin-win-cuda-12.4-x64.zip with "
              "cudart-llama-bin-win-cuda-12.4-x64.zip), or the Vulkan build.",
              "改用同一 llama.cpp 发布版的 CUDA 12 版本（llama-bNNNN-bin-win-cuda-12.4-x64.zip 加 "
              "cudart-llama-bin-win-cuda-12.4-x64.zip），或改用 Vulkan 版本。"))
