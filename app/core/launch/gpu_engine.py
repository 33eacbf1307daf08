"""No silent CPU fallback: an NVIDIA graphics card is here, but the chosen engine was built without any GPU
backend (the pip-built llama-cpp-python is CPU-only), so every model would run on the processor.

Said before the user starts, as the one problem shape (message, next step, evidence, action), with every fix as
data for a button: use a llama-server found on this computer that can use the card (``Fix.SWITCH_ENGINE`` with
its ``server_bin``), or rebuild the built-in engine with CUDA or Vulkan (``Fix.REBUILD_ENGINE`` with ``gpu``)
where that compiler is installed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from app.core.engine.gpu_build import GpuBuild
from app.core.hardware.report import HardwareReport
from app.core.launch.cuda_facts import CardFacts
from app.core.launch.engine_folder import FolderCheck
from app.core.launch.gpu_choice import EngineCandidate, GpuChoice, choose_gpu_engine, why_unfit
from app.core.launch.gpu_servers import GpuServer, has_gpu_backend
from app.core.problem import Check, Fix, FixAction, Status, fix_action
from app.core.text import T, Text

logger = logging.getLogger(__name__)

CHECK_ID = "engine_gpu"
EMBEDDED = "embedded"
LLAMA_SERVER = "llama-server"
MAX_SERVER_FIXES = 3


@dataclass(frozen=True)
class GpuEngineWarning:
    """The warning as a Problem; ``fixes`` are all the buttons, best first (``action`` is the first)."""

    engine: str
    message: Text
    next_step: Text | None
    evidence: tuple[str, ...]
    fixes: tuple[FixAction, ...] = ()

    @property
    def action(self) -> FixAction | None:
        return self.fixes[0] if self.fixes else None

    def check(self) -> Check:
        """The same warning as a check row (``doctor``, check lists)."""
        return Check(CHECK_ID, Status.WARNING, self.message, self.next_step, self.evidence, self.action)

    def to_dict(self, lang: str | None = None) -> dict:
        return self.check().to_dict(lang) | {"fixes": [fix.to_dict() for fix in self.fixes]}


def use_server_fix(server: GpuServer) -> FixAction:
    """The button "use this llama-server": switch to the llama-server engine with this file."""
    return fix_action(Fix.SWITCH_ENGINE, engine=LLAMA_SERVER, server_bin=server.path,
                      backends=", ".join(server.gpu_backends))


def rebuild_fix(build: GpuBuild) -> FixAction:
    return fix_action(Fix.REBUILD_ENGINE, engine=EMBEDDED, gpu=build.kind)


def cpu_only_engine_warning(report: HardwareReport, engine: str, compiled_backends: tuple[str, ...], *,
                            servers: list[GpuServer], builds: list[GpuBuild],
                            cannot_rebuild: Text | None = None, current_server: str | None = None
                            ) -> GpuEngineWarning | None:
    """The warning when an NVIDIA GPU is present and ``engine`` (its ``compiled_backends``) has no GPU backend;
    None otherwise. ``servers``: GPU llama-servers found (``gpu_servers.find_gpu_servers``); ``builds``: backends
    the built-in engine can be compiled with here (``gpu_build.available_gpu_builds``); ``cannot_rebuild``: why no
    rebuild is possible at all (a frozen app, no C++ compiler)."""
    if not report.has_nvidia_gpu or has_gpu_backend(compiled_backends):
        return None
    fitting, choice = fitting_servers(report, servers)
    others = [server for server in fitting if server.path != current_server][:MAX_SERVER_FIXES]
    builds = [] if cannot_rebuild is not None else list(builds)
    fixes = tuple(use_server_fix(server) for server in others) + tuple(rebuild_fix(build) for build in builds)
    evidence = [f"GPU {gpu.index}: {gpu.name}" for gpu in report.gpus]
    evidence.append(f"{engine} backends: {', '.join(compiled_backends) or 'CPU'}")
    evidence += [f"found {server.path} ({', '.join(server.gpu_backends)})" for server in others]
    evidence += choice.evidence() if choice is not None else ()
    evidence += [f"{build.label} compiler: {build.compiler}" for build in builds]
    if not builds:
        evidence.append("no CUDA (nvcc) or Vulkan (glslc) compiler found" if cannot_rebuild is None
                        else cannot_rebuild.render("en"))
    next_step = _next_step(others, builds)
    if choice is not None and _worth_saying(choice, report):  # why this one is offered first, or why none fits
        next_step = Text(f"{choice.reason.render('en')} {next_step.render('en')}",
                         f"{choice.reason.render('zh')}{next_step.render('zh')}")
    return GpuEngineWarning(engine, _message(report, engine), next_step, tuple(evidence), fixes)


def unfit_engine_warning(report: HardwareReport, path: str, compiled_backends: tuple[str, ...], folder: FolderCheck,
                         *, servers: Callable[[], list[GpuServer]]) -> GpuEngineWarning | None:
    """The chosen llama-server was built for a graphics card but cannot use this one (gpu_choice's rule: a CUDA 13
    build on a card below compute capability 7.5, a driver too old for its CUDA, a CUDA runtime missing from its
    folder): said with the fitting llama-servers found here as fixes. None when nothing proves it unfit.
    ``servers`` is called only then (it runs every llama-server found)."""
    if not report.gpus:
        return None
    gpu = report.gpus[0]
    card = CardFacts(gpu.name, gpu.compute_capability, gpu.driver_version, gpu.cuda_driver_version)
    backends = tuple(dict.fromkeys(name for name in (*compiled_backends, *folder.backends) if name != "CPU"))
    why = why_unfit(card, EngineCandidate(path, backends, folder.cuda_version, folder))
    if why is None:
        return None
    fitting, choice = fitting_servers(report, [server for server in servers() if server.path != path])
    offered = fitting[:MAX_SERVER_FIXES]
    message = (why if not folder.ok else  # the folder's own sentence names the files
               Text(f"The chosen llama-server cannot use the {gpu.name}: {_clause_en(why)}.",
                    f"所选的 llama-server 无法使用 {gpu.name}：{why.render('zh').rstrip('。')}。"))
    if offered and choice is not None:
        next_step = choice.reason
    elif folder.next_step() is not None and not folder.ok:
        next_step = folder.next_step() or T("", "")
    else:
        next_step = T("Update the NVIDIA driver, or download the CUDA 12 or Vulkan build of the same llama.cpp release "
                      "and choose its llama-server in Settings (Advanced).",
                      "请更新 NVIDIA 驱动，或下载同一 llama.cpp 发布版的 CUDA 12 或 Vulkan 版本，并在设置（高级）中选择"
                      "其中的 llama-server。")
    evidence = (f"GPU 0: {gpu.name}, compute capability {gpu.compute_capability or '?'}, driver "
                f"{gpu.driver_version or '?'} (CUDA {gpu.cuda_driver_version or '?'})", *folder.evidence(),
                *(f"found {server.path} ({', '.join(server.gpu_backends)})" for server in offered))
    return GpuEngineWarning(LLAMA_SERVER, message, next_step, evidence,
                            tuple(use_server_fix(server) for server in offered))


def _clause_en(text: Text) -> str:
    english = text.render("en").rstrip(".")
    return english[0].lower() + english[1:] if english[:1].isupper() and english[1:2].islower() else english


def _worth_saying(choice: GpuChoice, report: HardwareReport) -> bool:
    """A build was refused, none fits, or the card's readings show why the chosen one fits (with no readings and
    nothing refused, the choice has nothing to explain)."""
    gpu = report.gpus[0]
    return bool(choice.refused) or choice.chosen is None or bool(gpu.compute_capability and gpu.driver_version)


def fitting_servers(report: HardwareReport, servers: list[GpuServer]) -> tuple[list[GpuServer], GpuChoice | None]:
    """The servers that fit the first NVIDIA card, best first (gpu_choice.py's rule), and the choice that says why;
    all of them and None when there is nothing to choose from."""
    if not servers or not report.gpus:
        return list(servers), None
    gpu = report.gpus[0]
    card = CardFacts(gpu.name, gpu.compute_capability, gpu.driver_version, gpu.cuda_driver_version)
    choice = choose_gpu_engine(card, [EngineCandidate(server.path, server.gpu_backends, server.cuda_version,
                                                      server.folder) for server in servers])
    refused = {candidate.path for candidate, _ in choice.refused}
    chosen = choice.chosen.path if choice.chosen is not None else None
    fitting = sorted((server for server in servers if server.path not in refused), key=lambda s: s.path != chosen)
    return fitting, choice


def _message(report: HardwareReport, engine: str) -> Text:
    card = report.gpus[0].name
    if engine == EMBEDDED:
        return T("This computer has an NVIDIA graphics card ({card}), but the built-in engine was built without "
                 "graphics-card support: every model would run on the processor only, many times slower.",
                 "这台电脑有 NVIDIA 显卡（{card}），但内置引擎在构建时没有包含显卡支持："
                 "所有模型都只会在处理器上运行，速度慢很多倍。", card=card)
    return T("This computer has an NVIDIA graphics card ({card}), but the chosen llama-server was built without "
             "graphics-card support: every model would run on the processor only, many times slower.",
             "这台电脑有 NVIDIA 显卡（{card}），但所选的 llama-server 在构建时没有包含显卡支持："
             "所有模型都只会在处理器上运行，速度慢很多倍。", card=card)


def _next_step(servers: list[GpuServer], builds: list[GpuBuild]) -> Text:
    labels = " or ".join(build.label for build in builds)
    labels_zh = "或".join(build.label for build in builds)
    if servers and builds:
        return T("Use a llama-server found on this computer that can use the card, or rebuild the built-in engine "
                 "with {backends} (it can take half an hour).",
                 "请改用这台电脑上找到的、能使用显卡的 llama-server，或用 {backends_zh} 重新构建内置引擎"
                 "（可能需要半小时）。", backends=labels, backends_zh=labels_zh)
    if servers:
        return T("Use a llama-server found on this computer that can use the card.",
                 "请改用这台电脑上找到的、能使用显卡的 llama-server。")
    if builds:
        return T("Rebuild the built-in engine with {backends} (it can take half an hour).",
                 "请用 {backends_zh} 重新构建内置引擎（可能需要半小时）。", backends=labels, backends_zh=labels_zh)
    return T("Download a llama.cpp release built for your graphics card (CUDA or Vulkan) and choose its llama-server "
             "in Settings (Advanced), or install NVIDIA's CUDA toolkit so the built-in engine can be rebuilt for "
             "the card.",
             "请下载为你的显卡构建的 llama.cpp 发布版（CUDA 或 Vulkan），并在设置（高级）中选择其中的 "
             "llama-server；或安装 NVIDIA 的 CUDA 工具包，以便为显卡重新构建内置引擎。")


def engine_gpu_warning(report: HardwareReport, engine: str, server_bin: str | None = None) -> GpuEngineWarning | None:
    """Everything above looked up on this computer (runs programs: call it off the GUI thread). None when there
    is no NVIDIA GPU, the engine has a GPU backend, or the llama-server is missing (its own row says that)."""
    if not report.has_nvidia_gpu:
        return None
    from app.core.engine import gpu_build, rebuild
    from app.core.launch.backends import embedded_backend, llama_server_backend
    from app.core.launch.gpu_servers import find_gpu_servers
    from app.core.problem import UserError

    try:
        backend = embedded_backend() if engine == EMBEDDED else llama_server_backend(server_bin)
    except UserError as error:
        logger.info("engine %s not inspected for GPU support: %s", engine, error)
        return None
    if engine != EMBEDDED and backend.path:
        from pathlib import Path

        from app.core.launch.engine_folder import check_engine_folder

        folder = check_engine_folder(Path(backend.path))
        unfit = unfit_engine_warning(report, backend.path, backend.compiled_backends, folder,
                                     servers=find_gpu_servers)
        if unfit is not None:
            return unfit
        if has_gpu_backend(folder.backends):
            return None  # a GPU backend library beside it that nothing proves unusable here
    if has_gpu_backend(backend.compiled_backends):
        return None
    return cpu_only_engine_warning(report, engine, backend.compiled_backends, servers=find_gpu_servers(),
                                   builds=gpu_build.available_gpu_builds(),
                                   cannot_rebuild=rebuild.cannot_rebuild_reason(), current_server=backend.path)
