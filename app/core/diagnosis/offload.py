"""What the engine really put on the graphics card after a load, and "fewer layers than asked" as a diagnosis
instead of a silent slowdown.

llama.cpp says it at every load (``src/llama-model.cpp``)::

    load_tensors: offloaded 28/29 layers to GPU
    load_tensors:        CUDA0 model buffer size =  4168.09 MiB
    load_tensors:   CPU_Mapped model buffer size =   292.36 MiB

The total counts the output layer too (block count + 1). The count alone is not proof: a build without any GPU
backend, asked for ``-ngl 99``, still prints ``offloaded 3/3 layers to GPU`` and then only host buffers
(measured here with llama.cpp b11434 and llama-cpp-python 0.3.36, which prints the buffers but no count). So the
layers count as on a GPU only when a GPU buffer holds them, and an engine with no GPU backend has none there.
Recent llama-server builds print these lines only at ``-lv 4``; without any line, the backends decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.diagnosis.value import Diagnosis, trim_evidence
from app.core.launch.gpu_servers import has_gpu_backend
from app.core.problem import change_settings
from app.core.text import T, Text

if TYPE_CHECKING:  # the CUDA reading is imported only when a card is given (the supervisor imports this module)
    from app.core.launch.cuda_facts import CardFacts

CAUSE = "gpu_offload_short"
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_BUFFER = re.compile(r"(\S+) (model|KV|compute) buffer size =\s*([\d.]+) MiB")
_NO_GPU = re.compile(r"no usable GPU found|compiled without GPU support|not compiled with GPU offload support")
# a GPU backend loaded with a device: llama.cpp's "no usable GPU found" warning is then no proof of the processor
# (ggml-org/llama.cpp#22748: b9049 prints it with "load_backend: loaded CUDA backend" and the card in use)
_GPU_LOADED = re.compile(r"load_backend: loaded (?:CUDA|Vulkan|ROCm|HIP|Metal|SYCL|MUSA|OpenCL) backend"
                         r"|ggml_cuda_init: found [1-9]\d* (?:CUDA|ROCm) devices"
                         r"|ggml_vulkan: Found [1-9]\d* Vulkan devices", re.IGNORECASE)
_HOST_BUFFERS = ("CPU", "CPU_Mapped", "CPU_REPACK", "CUDA_Host", "Metal_Mapped", "Vulkan_Host")


def is_offload_line(text: str) -> bool:
    """Cheap test for the line that settles it (the supervisor asks for every log line)."""
    return "layers to GPU" in text


@dataclass(frozen=True)
class Offload:
    """What one load said: layers offloaded out of the total, each GPU's buffers in MiB, whether it printed any
    model buffer at all, and whether it said it has no usable GPU."""

    offloaded: int | None = None
    total: int | None = None
    gpu_buffers_mib: dict[str, float] = field(default_factory=dict)  # "CUDA0" -> model + KV + compute MiB
    model_buffers_seen: bool = False
    no_gpu_warning: bool = False
    evidence: tuple[str, ...] = ()
    gpu_backend_loaded: bool = False

    @property
    def on_gpu(self) -> int | None:
        """Layers really on a GPU: the count printed, but 0 when every buffer printed is in host memory."""
        if self.model_buffers_seen and not self.gpu_buffers_mib:
            return 0
        if self.offloaded is None and self.no_gpu_warning and not self.gpu_backend_loaded:
            return 0
        return self.offloaded


def read_offload(lines: Iterable[str]) -> Offload:
    """The last load's offload facts from log lines (an earlier load in the same log is overridden)."""
    offloaded = total = None
    buffers: dict[str, float] = {}
    model_seen = no_gpu = gpu_loaded = False
    evidence: list[str] = []
    for line in lines:
        gpu_loaded = gpu_loaded or _GPU_LOADED.search(line) is not None
        if (match := _OFFLOADED.search(line)) is not None:
            offloaded, total = int(match.group(1)), int(match.group(2))
            buffers, model_seen, evidence = {}, False, [line]  # a new load starts over
        elif (match := _BUFFER.search(line)) is not None:
            device, kind = match.group(1), match.group(2)
            model_seen = model_seen or kind == "model"
            if device not in _HOST_BUFFERS:
                buffers[device] = buffers.get(device, 0.0) + float(match.group(3))
            if device not in _HOST_BUFFERS or kind == "model":
                evidence.append(line)
        elif _NO_GPU.search(line):
            no_gpu = True
            evidence.append(line)
    return Offload(offloaded, total, buffers, model_seen, no_gpu, trim_evidence(evidence), gpu_loaded)


def offload_diagnosis(lines: Iterable[str], asked: int, *, backends: tuple[str, ...] | None = None,
                      total_hint: int | None = None, card: CardFacts | None = None,
                      build_cuda: str | None = None) -> Diagnosis | None:
    """A diagnosis when the engine put fewer layers on a GPU than ``asked`` (the config's GPU layers, -1: all),
    else None. ``backends``: the engine's compiled backends, when known; ``total_hint``: the model's layers + 1,
    for when the log does not say; ``card`` (NVML's readings) and ``build_cuda`` (the engine folder's CUDA version,
    app/core/launch/engine_folder.py) name a CUDA 13 build on a card below compute capability 7.5 as the reason."""
    if asked == 0:
        return None
    lines = list(lines)
    offload = read_offload(lines)
    total = offload.total or total_hint
    wanted = None if total is None else (total if asked < 0 else min(asked, total))
    done = offload.on_gpu
    evidence = offload.evidence
    workers = any(name.startswith("RPC") for name in offload.gpu_buffers_mib)  # RPC0[host:port]: a worker holds them
    if backends is not None and not has_gpu_backend(backends) and not workers:
        done = 0  # whatever it printed: nothing can be on a GPU
        evidence += (f"engine backends: {', '.join(backends) or 'CPU'}",)
    if done is None or (wanted is not None and done >= wanted) or (wanted is None and done > 0):
        return None
    if done == 0:
        old_card = _cuda13_on_old_card(card, build_cuda, lines)
        if card is not None and old_card is not None:
            evidence += (f"GPU: {card.name}, compute capability {card.compute_capability}",
                         f"engine CUDA version: {build_cuda}")
            return Diagnosis(CAUSE, old_card[0], old_card[1], evidence=trim_evidence(evidence), restartable=False)
        return Diagnosis(CAUSE, _none_message(wanted), _NONE_NEXT, evidence=trim_evidence(evidence),
                         restartable=False)
    message = T("The engine put only {done} of {wanted} model layers on the graphics card; the other {rest} run "
                "on the processor, which is much slower.",
                "引擎只把 {wanted} 层中的 {done} 层放到了显卡上；其余 {rest} 层在处理器上运行，速度慢得多。",
                done=done, wanted=wanted, rest=(wanted or 0) - done)
    next_step = T("Close other programs that use the graphics card and restart. If it stays so, set GPU layers to "
                  "{done} so the memory plan matches what really runs.",
                  "请关闭其他占用显卡的程序后重新启动。如果仍然如此，请把 GPU 层数设为 {done}，"
                  "让内存计划与实际运行的情况一致。", done=done)
    return Diagnosis(CAUSE, message, next_step, action=change_settings({"gpu_layers": done}),
                     evidence=trim_evidence(evidence), restartable=False)


def _cuda13_on_old_card(card: CardFacts | None, build_cuda: str | None, lines: list[str]) -> tuple[Text, Text] | None:
    if card is None:
        return None
    from app.core.diagnosis.cuda_causes import cuda13_on_old_card

    return cuda13_on_old_card(card, build_cuda, lines)


def _none_message(wanted: int | None) -> Text:
    if wanted:
        return T("The engine put none of the {wanted} model layers on the graphics card: it runs entirely on the "
                 "processor, which is much slower.",
                 "引擎没有把 {wanted} 层模型中的任何一层放到显卡上：模型完全在处理器上运行，速度慢得多。",
                 wanted=wanted)
    return T("The engine put no model layer on the graphics card: it runs entirely on the processor, which is much "
             "slower.", "引擎没有把任何模型层放到显卡上：模型完全在处理器上运行，速度慢得多。")


_NONE_NEXT = T(
    "This engine cannot use a graphics card. In the Machine step, use a llama-server built for your graphics card "
    "or rebuild the built-in engine with graphics-card support, then start again.",
    "这个引擎无法使用显卡。请在“本机”步骤中改用为你的显卡构建的 llama-server，"
    "或为内置引擎重新构建显卡支持，然后重新启动。")
