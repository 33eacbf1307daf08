"""Which GPU llama-server found on this computer fits the NVIDIA card, and why (one sentence, both languages).

The card's compute capability and the driver (both read by NVML) decide between CUDA 13, CUDA 12 and Vulkan builds:
a CUDA 13 build needs compute capability 7.5 or newer (a GTX 10-series card, Pascal, would silently run on the
processor), and a CUDA build needs a driver that supports its CUDA version (app/core/launch/cuda_facts.py has
NVIDIA's numbers and their sources). An engine folder that misses files (engine_folder.py) is never offered.
A build is refused only on proof: an unknown compute capability or driver version refuses nothing.
Preference among the builds that fit: CUDA (the newest CUDA version first), then Vulkan, then the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.launch.cuda_facts import (
    MIN_COMPUTE_CAPABILITY,
    MIN_DRIVER_BRANCH,
    CardFacts,
    card_too_old,
    cuda_major,
    driver_too_old,
)
from app.core.launch.engine_folder import FolderCheck
from app.core.text import T, Text


@dataclass(frozen=True)
class EngineCandidate:
    """A llama-server found here: its file, GPU backends, CUDA runtime version ("12", "12.4") and folder check."""

    path: str
    gpu_backends: tuple[str, ...]
    cuda_version: str | None = None
    folder: FolderCheck | None = None

    @property
    def label(self) -> str:
        """"CUDA 12.4", "CUDA", "Vulkan" (product names, the same in every language)."""
        if "CUDA" in self.gpu_backends:
            return f"CUDA {self.cuda_version}" if self.cuda_version else "CUDA"
        return ", ".join(self.gpu_backends) or "CPU"


@dataclass(frozen=True)
class GpuChoice:
    chosen: EngineCandidate | None
    reason: Text  # why this one, or why none fits
    refused: tuple[tuple[EngineCandidate, Text], ...] = ()

    def evidence(self) -> tuple[str, ...]:
        return tuple(f"not offered: {candidate.path} ({why.render('en')})" for candidate, why in self.refused)


def why_unfit(card: CardFacts, candidate: EngineCandidate) -> Text | None:
    """Why this build cannot use this card, from evidence; None when nothing proves it cannot."""
    if candidate.folder is not None and not candidate.folder.ok:
        return candidate.folder.problem()
    if "CUDA" not in candidate.gpu_backends:
        return None
    major = cuda_major(candidate.cuda_version)
    if major is None:
        return None
    if card_too_old(card, major):
        need = ".".join(map(str, MIN_COMPUTE_CAPABILITY[major]))
        return T("the {label} build needs a card with compute capability {need} or newer, and the {card} has {cc}",
                 "{label} 版本需要计算能力 {need} 或更高的显卡，而 {card} 只有 {cc}",
                 label=candidate.label, need=need, card=card.name, cc=card.compute_capability or "?")
    if driver_too_old(card, major):
        need = MIN_DRIVER_BRANCH.get(major)
        return T("the {label} build needs NVIDIA driver {need} or newer, and this one is {driver} (it supports CUDA "
                 "up to {supported})",
                 "{label} 版本需要 {need} 或更新的 NVIDIA 驱动，而当前驱动是 {driver}（最高支持 CUDA {supported}）",
                 label=candidate.label, need=need or "?", driver=card.driver_version or "?",
                 supported=card.cuda_driver_version or "?")
    return None


def _preference(candidate: EngineCandidate) -> tuple[int, float]:
    if "CUDA" in candidate.gpu_backends:
        try:
            version = float(candidate.cuda_version or 0)
        except ValueError:
            version = 0.0
        return (0, -version)
    if "Vulkan" in candidate.gpu_backends:
        return (1, 0.0)
    return (2, 0.0)


def choose_gpu_engine(card: CardFacts, candidates: Sequence[EngineCandidate]) -> GpuChoice:
    """The build that fits the card best, with the one sentence that says why (or why none fits)."""
    verdicts = [(candidate, why_unfit(card, candidate)) for candidate in candidates]
    refused = tuple((candidate, why) for candidate, why in verdicts if why is not None)
    fitting = sorted((c for c, why in verdicts if why is None), key=_preference)
    if not candidates:
        return GpuChoice(None, T("No llama-server that can use a graphics card was found on this computer.",
                                 "这台电脑上没有找到能使用显卡的 llama-server。"))
    if not fitting:
        first, why = refused[0]
        return GpuChoice(None, _joined(
            T("None of the llama-server programs found here fits the {card}: ",
              "这里找到的 llama-server 都不适合 {card}：", card=card.name), _clause(why), T(". ", "。"),
            _advice(first)), refused)
    chosen = fitting[0]
    if refused:
        reason = _joined(T("The {label} llama-server was chosen: ", "已选择 {label} 版 llama-server：",
                           label=chosen.label), _clause(refused[0][1]), T(".", "。"))
    elif card.compute_capability and card.driver_version:
        reason = T("The {label} llama-server was chosen: it fits the {card} (compute capability {cc}) and driver "
                   "{driver}.",
                   "已选择 {label} 版 llama-server：它适合 {card}（计算能力 {cc}）和驱动 {driver}。",
                   label=chosen.label, card=card.name, cc=card.compute_capability, driver=card.driver_version)
    else:  # readings missing: nothing rules it out, and nothing more can be said
        reason = T("The {label} llama-server was chosen: it can use the graphics card.",
                   "已选择 {label} 版 llama-server：它可以使用显卡。", label=chosen.label)
    return GpuChoice(chosen, reason, refused)


def _advice(refused: EngineCandidate) -> Text:
    """What to do about the first build refused: complete its folder, else update the driver or change builds."""
    if refused.folder is not None and (step := refused.folder.next_step()) is not None:
        return step
    return T("Update the NVIDIA driver, or use the CUDA 12 or Vulkan build of llama.cpp.",
             "请更新 NVIDIA 驱动，或改用 CUDA 12 或 Vulkan 版本的 llama.cpp。")


def _clause(text: Text) -> Text:
    """A sentence as a clause after a colon: no closing full stop, and a lower-case start in English."""
    english, chinese = text.render("en").rstrip("."), text.render("zh").rstrip("。")
    if english[:1].isupper() and english[1:2].islower():
        english = english[0].lower() + english[1:]
    return Text(english, chinese)


def _joined(*parts: Text) -> Text:
    return Text("".join(part.render("en") for part in parts), "".join(part.render("zh") for part in parts))
