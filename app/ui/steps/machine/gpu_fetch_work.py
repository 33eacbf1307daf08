"""What the Machine step's "Get the GPU engine for this card" asks of core (app.core.hub.engine_fetch and
app.core.launch.fetched_engines), as plain functions for workers.

Nothing of core's fetch is imported when this module is: every call imports what it needs, so the window paints
without the downloader and loads it once the hardware scan found an NVIDIA card. ``SETUP`` says where the builds
come from (llama.cpp's release page by default; tests point it at a loopback stand-in with pins of its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.core.hardware.report import HardwareReport
    from app.core.hub.download_progress import StopReason
    from app.core.hub.engine_fetch import FetchPlan, FetchProgress
    from app.core.launch.cuda_facts import CardFacts
    from app.core.launch.fetched_engines import FetchedEngine
    from app.core.launch.release_builds import ReleaseSource


@dataclass(frozen=True)
class FetchSetup:
    """Where a build comes from and how it is checked: ``source`` (None: llama.cpp's release page with the pins
    the app holds), ``key`` (None: this computer's system), ``model`` (None: the engine check's small model)."""

    source: ReleaseSource | None = None
    key: str | None = None
    model: Path | None = None


SETUP = FetchSetup()


def card_of(report: HardwareReport | None) -> CardFacts | None:
    """The first NVIDIA card's facts (the one the servers use first); None without one."""
    if report is None or not report.gpus:
        return None
    from app.core.launch.cuda_facts import CardFacts

    gpu = report.gpus[0]
    return CardFacts(gpu.name, gpu.compute_capability, gpu.driver_version, gpu.cuda_driver_version)


# --- worker-thread calls -------------------------------------------------------------------------


def plan(card: CardFacts, setup: FetchSetup, proxy: str | None = None) -> FetchPlan:
    """The build for ``card``, why, its size and what its archives are checked against, or why it cannot be
    fetched; the release's listing is read (one request), no archive is downloaded. ``proxy``: the user's own
    (None: the system's)."""
    from app.core.hub.engine_fetch import plan_fetch

    return plan_fetch(card, source=setup.source, key=setup.key, proxy=proxy)


def get(card: CardFacts, setup: FetchSetup, build: str | None, planned: FetchPlan | None = None,
        proxy: str | None = None, *, progress: Callable[[Any], None], should_stop: Callable[[], StopReason | None],
        cancel: Callable[[], bool] = lambda: False) -> FetchedEngine:
    """Download, check and list the build (EngineFetchError; DownloadStopped on pause or cancel). ``planned``: the
    plan the user saw for this build (None: planned again). The task's ``cancel`` (the window closing) pauses: the
    downloads are kept for the next try."""
    from app.core.hub.download_progress import StopReason
    from app.core.hub.engine_fetch import get_gpu_engine
    from app.core.launch.release_builds import BuildKind

    def report(value: FetchProgress) -> None:
        progress(value)

    def stop() -> StopReason | None:
        return should_stop() or (StopReason.PAUSE if cancel() else None)

    kind = BuildKind(build) if build else None
    if planned is not None and (planned.build is None or (kind is not None and planned.build.kind is not kind)):
        planned = None  # a plan for another build
    return get_gpu_engine(card, build=kind, source=setup.source, key=setup.key, model=setup.model,
                          on_progress=report, should_stop=stop, proxy=proxy, plan=planned)


def discard(card: CardFacts, setup: FetchSetup, build: str | None, planned: FetchPlan | None = None,
            proxy: str | None = None) -> None:
    """Cancel while paused: core's own cancel removes what the pause kept (the fetch is asked again and told to
    cancel at its first look, before any byte is fetched)."""
    from app.core.hub.download_progress import DownloadStopped, StopReason

    try:
        get(card, setup, build, planned, proxy, progress=lambda _value: None, should_stop=lambda: StopReason.CANCEL)
    except DownloadStopped:
        return


def registered() -> list[FetchedEngine]:
    from app.core.launch.fetched_engines import registered_engines

    return registered_engines()


def remove(kind: str) -> list[FetchedEngine]:
    from app.core.launch.fetched_engines import remove_engine

    return remove_engine(kind)
