"""What "Get a model" asks of core (app.core.hub), as plain functions for workers, plus the few words it shows.

Nothing of app.core.hub (or huggingface_hub) is imported when this module is: every call imports what it needs, so
the window starts without them and loads them when the user opens "Get a model".

The worker calls (``search_repos``, ``list_repo``, ``scan_machine``, ``fit_models``, ``download``) run on worker
threads; the ``*_text`` helpers run on the GUI thread and only format values.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from PySide6.QtCore import QCoreApplication

if TYPE_CHECKING:
    from app.core.hardware.report import HardwareReport
    from app.core.hub.client import RepoHit
    from app.core.hub.errors import HubError
    from app.core.hub.files import HubModel, RepoListing
    from app.core.hub.fit import FileFit
    from app.core.hub.source import HubAccess

logger = logging.getLogger(__name__)

SOURCES = ("hf", "hf-mirror", "modelscope")  # app.core.hub.source.HubSource's values (not imported at start-up)
FIT_READS = 3  # headers read at a time, as core's fit_listing does
CHECK_ALL_MAX = 6  # a repository with more models is searched along its sizes instead of reading every header
_RANK = {"fits_gpu": 3, "partial_gpu": 2, "cpu_only": 1}  # FitVerdict values, best first (core's order)


def tr(text: str) -> str:
    return QCoreApplication.translate("", text)  # lupdate files module-level tr() under the empty context


@dataclass(frozen=True)
class HubChoice:
    """Where to search and download: a source (SOURCES), the user's token (None: none is sent), an address that
    replaces the source's own (tests: the fake Hub) and a proxy of the user's own for every request (None: the
    system's, HTTP(S)_PROXY). Neither the token nor the proxy (it may carry a password) is logged: repr hides them."""

    source: str = SOURCES[0]
    token: str | None = field(default=None, repr=False)
    endpoint: str | None = None
    proxy: str | None = field(default=None, repr=False)

    def access(self) -> HubAccess:
        from app.core.hub.source import HubAccess, HubSource

        return HubAccess(HubSource(self.source), endpoint=self.endpoint or None, token=self.token or None,
                         proxy=self.proxy or None)


def proxy_problem(proxy: str | None) -> HubError | None:
    """Core's sentence for a proxy address that cannot be used (None: usable, or none given). Core's own rule: the
    client its requests would go through is made for the address (and kept for them)."""
    if not proxy:
        return None
    from app.core.hub.errors import HubError
    from app.core.hub.http import client
    from app.core.hub.source import HubAccess

    try:
        client(HubAccess(proxy=proxy))
    except HubError as error:
        return error
    return None


def load_hub_client() -> None:
    """Load what a Hub request and the proxy check need (huggingface_hub, httpx2 and what its first proxy client
    loads: ~0.6 s at load 7) on a worker, so that checking a proxy address on the GUI thread costs only making its
    client (~0.15 s, once per address: core keeps it for the requests)."""
    import httpx2
    import huggingface_hub.utils  # noqa: F401

    import app.core.hub.http  # noqa: F401

    httpx2.Client(proxy="http://127.0.0.1:9", trust_env=False).close()  # what a proxy client loads on first use


PROXY_MASK = "••••"  # a saved proxy's password, as the dialog shows it


def masked_proxy(proxy: str | None) -> str:
    """``proxy`` as the dialog may show it: a password replaced by PROXY_MASK (the user name and address kept)."""
    if not proxy:
        return ""
    user, password, rest = _proxy_parts(proxy)
    if password is None:
        return proxy
    return rest[0] + "://" + f"{user}:{PROXY_MASK}@" + rest[1]


def unmasked_proxy(text: str, real: str | None) -> str:
    """What the proxy field's ``text`` stands for: PROXY_MASK in its password place is ``real``'s password (the user
    kept it while editing the rest); any other text is itself."""
    if not real or PROXY_MASK not in text:
        return text
    user, password, rest = _proxy_parts(text)
    real_password = _proxy_parts(real)[1]
    if password != PROXY_MASK or real_password is None:
        return text
    return rest[0] + "://" + f"{user}:{real_password}@" + rest[1]


def _proxy_parts(proxy: str) -> tuple[str, str | None, tuple[str, str]]:
    """(user, password or None, (scheme, the rest after the user info)) of ``proxy``, as written (not decoded)."""
    try:
        parts = urlsplit(proxy)
    except ValueError:  # e.g. an unclosed IPv6 bracket: no user info to find
        return "", None, ("", proxy)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or not parts.scheme:
        return "", None, ("", proxy)
    user, colon, password = userinfo.partition(":")
    after = urlunsplit(("", host, parts.path, parts.query, parts.fragment)).removeprefix("//")
    return user, password if colon else None, (parts.scheme, after)


# --- worker-thread calls -------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A search's answer: the repositories found; ``listing`` when the text named a repository itself."""

    hits: list[RepoHit]
    listing: RepoListing | None = None


def search_repos(text: str, choice: HubChoice) -> Found:
    """The GGUF repositories matching ``text``; "owner/name" is listed at once when it is one (HubError otherwise)."""
    from app.core.hub.client import RepoHit, is_repo_id, list_files, search
    from app.core.hub.errors import HubError, HubFault

    access = choice.access()
    if is_repo_id(text):
        try:
            listing = list_files(text.strip(), access)
        except HubError as error:
            if error.kind is not HubFault.NOT_FOUND:
                raise
        else:
            return Found([RepoHit(listing.repo, None, None, listing.gated)], listing)
    return Found(search(text, access))


def list_repo(repo: str, choice: HubChoice) -> RepoListing:
    from app.core.hub.client import list_files

    return list_files(repo, choice.access())


def scan_machine(backend: str | None) -> tuple[HardwareReport, str]:
    """This computer as the plan sees it, and the engine a first run would use (the automatic one when None)."""
    from app.core.hardware.scan import scan_hardware
    from app.core.launch.engine_choice import automatic_engine

    return scan_hardware(), backend or automatic_engine(None).backend


def fit_one(model: HubModel, choice: HubChoice, machine: tuple[Any, str], *,
            vram_budget: int | None = None) -> FileFit:
    """One model's verdict from its header (a file the user chose that the search did not read)."""
    from app.core.hub.remote import fit_model

    hw, backend = machine
    return fit_model(model, choice.access(), hw, backend, vram_budget=vram_budget)


def fit_models(listing: RepoListing, choice: HubChoice, machine: tuple[Any, str], *,
               vram_budget: int | None = None, progress: Callable[[Any], None],
               cancel: Callable[[], bool]) -> list[FileFit]:
    """Verdicts from the models' headers, reported one by one as ``progress(FileFit)``; those read, with the best
    fit marked, at the end. Up to CHECK_ALL_MAX models: every one (a few at a time). More (a repository of twenty
    quantizations, a few MB of header each): a search along their sizes for the best fit (``frontier``)."""
    from app.core.hub.fit import mark_best

    def one(model: HubModel) -> FileFit | None:
        return None if cancel() else fit_one(model, choice, machine, vram_budget=vram_budget)

    if len(listing.models) > CHECK_ALL_MAX:
        return mark_best(frontier(list(listing.models), one, progress))
    fits: dict[str, FileFit] = {}
    with ThreadPoolExecutor(max_workers=FIT_READS, thread_name_prefix="get-model-fit") as pool:
        for future in as_completed([pool.submit(one, m) for m in listing.models]):
            fit = future.result()
            if fit is not None:
                fits[fit.name] = fit
                progress(fit)
    return mark_best([fits[m.name] for m in listing.models if m.name in fits])


def frontier(models: list[HubModel], judge: Callable[[HubModel], FileFit | None],
             progress: Callable[[Any], None]) -> list[FileFit]:
    """The verdicts that find the best fit in about log2(n) + 1 header reads: a smaller file of the same model
    never places worse than a larger one, so the smallest shows the best placement this computer gives (on the
    card, partly, processor) and a binary search along the sizes finds the largest file that still gets it with a
    useful context (core's best fit). ``judge`` None: cancelled, stop."""
    ordered = sorted((m for m in models if m.complete and m.size is not None), key=lambda m: m.size or 0)
    fits: list[FileFit] = []

    def check(index: int) -> FileFit | None:
        fit = judge(ordered[index])
        if fit is not None:
            fits.append(fit)
            progress(fit)
        return fit

    if not ordered:
        return fits
    smallest = check(0)
    if smallest is None or not smallest.useful:
        return fits
    top = _RANK.get(smallest.verdict.value)
    low, high = 1, len(ordered) - 1
    while low <= high:
        middle = (low + high) // 2
        fit = check(middle)
        if fit is None:
            break
        if _RANK.get(fit.verdict.value) == top and fit.useful:
            low = middle + 1
        else:
            high = middle - 1
    return fits


def suggested_repo(hw: Any) -> str | None:
    from app.core.hub.curated import suggested_for_hardware

    pick = suggested_for_hardware(hw)
    return pick.repo if pick is not None else None


@dataclass(frozen=True)
class Downloaded:
    path: Path  # the file to open (shard 1 of a split model)
    already: bool  # every part was in the model folder already, verified: nothing was fetched
    verified: bool  # the Hub published a SHA-256 for every part, and each matched


def download(model: HubModel, choice: HubChoice, folder: Path | None, elsewhere: tuple[str, ...] = (), *,
             progress: Callable[[Any], None], cancel: Callable[[], bool],
             should_stop: Callable[[], Any]) -> Downloaded:
    """Download (or continue) ``model`` into the app's model folder. HubError / DownloadStopped. The task's
    ``cancel`` (the window closing) pauses: the partial file is kept and the next download continues it.

    ``elsewhere``: files already on this computer (the "On this computer" list) of the model's size; one with the
    Hub's SHA-256 is opened where it is instead of downloading it again."""
    from app.core.hub.download import DownloadStats, already_have, download_model
    from app.core.hub.download_progress import StopReason

    verified = all(part.sha256 for part in model.parts)
    if elsewhere and len(model.parts) == 1 and verified:
        have = already_have(model, folder, elsewhere=[Path(p) for p in elsewhere])
        if have is not None:
            return Downloaded(have, True, True)

    def stop() -> StopReason | None:
        return should_stop() or (StopReason.PAUSE if cancel() else None)

    stats = DownloadStats()
    path = download_model(model, choice.access(), folder=folder, on_progress=progress, should_stop=stop,
                          stats=stats)
    already = stats.skipped_parts >= len(model.parts) and stats.received_bytes == 0
    return Downloaded(path, already, verified)


# --- GUI-thread helpers --------------------------------------------------------------------------


def pill_text(fit: FileFit | None) -> str:
    """The short verdict a file's pill shows."""
    from app.core.hub.fit import FitVerdict

    if fit is None:
        return tr("Checking fit…")
    verdict = fit.verdict
    if verdict is FitVerdict.FITS_GPU:
        return tr("Fits on the graphics card")
    if verdict is FitVerdict.PARTIAL_GPU:
        return tr("{n} of {m} layers on the card").format(n=fit.gpu_layers, m=fit.total_layers)
    if verdict is FitVerdict.CPU_ONLY:
        return tr("Processor only")
    if verdict is FitVerdict.DOES_NOT_FIT:
        return tr("Does not fit")
    return tr("Fit unknown")


def unknown_pill_text() -> str:
    """The pill of a file no verdict will come for."""
    return tr("Fit unknown")


def unchecked_pill_text() -> str:
    """The pill of a file whose header the search for the best fit did not need (choosing it reads it)."""
    return tr("Not checked")


PILL_COLOURS = {  # verdict value -> (background, text)
    "fits_gpu": ("#dcefdc", "#1b5e20"),
    "partial_gpu": ("#fff1c9", "#6d4c00"),
    "cpu_only": ("#e3eaf3", "#27384d"),
    "does_not_fit": ("#f8d7da", "#842029"),
    "unknown": ("#ececec", "#444444"),
    "checking": ("#f3f3f3", "#666666"),
    "best": ("#d8e6ff", "#0b3d91"),
}


def pill_style(key: str) -> str:
    background, text = PILL_COLOURS.get(key, PILL_COLOURS["unknown"])
    return (f"QLabel {{ background: {background}; color: {text}; border-radius: 8px; padding: 1px 7px; "
            f"font-weight: 600; }}")


def size_text(size: int | None) -> str:
    from app.core.text import human_bytes

    return human_bytes(size) if size is not None else "?"


def model_label(model: HubModel) -> str:
    """The file's name, with its part count for a split model."""
    if model.is_split:
        return tr("{name} ({n} parts)").format(name=model.name, n=model.expected_parts)
    return model.name


def downloads_text(hit: RepoHit) -> str:
    if hit.downloads is None:
        return ""
    return tr("{n} downloads").format(n=f"{hit.downloads:,}")
