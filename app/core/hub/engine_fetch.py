"""Get a GPU engine for a user who has none: the official llama.cpp release build that fits the NVIDIA card and
driver (app/core/launch/release_builds.py), downloaded, verified, unpacked, checked on the card, then offered.

1. The build: CUDA 13, CUDA 12 or Vulkan by the card's compute capability and the driver (or the one asked for).
2. Every archive it needs (a CUDA build's runtime archive too) must have a SHA-256 and size to be checked against:
   the ones the app holds (release_pins.py) decide; for an archive it holds none for, the ones GitHub publishes in
   the release's listing (app/core/hub/github_release.py: computed by GitHub when the asset was uploaded, read over
   HTTPS through the app's HTTP client and proxy). An archive with neither (the listing gives no digest, or cannot
   be read), an archive whose published digest or size differs from the one the app holds (when the two disagree,
   neither is trusted) and an archive the listing does not have (renamed: the names that look alike are said) are
   refused before any byte of an archive is fetched, each with a sentence saying so.
3. Download with the model downloader (app/core/hub/download.py: a ``.part`` file hashed while the bytes arrive,
   resumed with Range after a cut or a pause, renamed only when size and SHA-256 are the expected ones).
4. Unpack into ``<data>/engines/<build>.part/`` (archive_unpack.py: no path out of the folder, no stray links).
5. Check: the folder as a unit (engine_folder.py: launcher, libraries, a CUDA build's runtime); ``--list-devices``
   shows this card; a tiny model generates with its model buffer on that device (server/gpu_generation.py).
6. Only then: the folder renamed to ``<data>/engines/<build>/`` and listed (launch/fetched_engines.py), so the
   places that look for GPU llama-servers offer it. The downloaded archives are deleted.

A failure at any step leaves no folder and no entry behind (a network failure keeps the partial download for the
next try). Pause keeps the partial downloads; cancel removes them; neither touches an engine already listed.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from app.core.hub.archive_unpack import ArchiveRefused, BadArchive, UnsafeArchive, unpack
from app.core.hub.download import download_model, remove_model_files
from app.core.hub.download_progress import DownloadProgress, DownloadStopped, StopReason
from app.core.hub.errors import HubError, HubFault
from app.core.hub.files import HubFile, HubModel
from app.core.hub.github_release import ListingUnavailable, ReleaseListing, read_release, shown_name
from app.core.hub.source import HubAccess
from app.core.launch import device_list, fetched_engines
from app.core.launch.cuda_facts import CardFacts
from app.core.launch.device_list import ListedDevice, card_device, list_devices
from app.core.launch.engine_folder import check_engine_folder, find_launcher
from app.core.launch.release_builds import (
    BuildKind,
    ReleaseBuild,
    ReleaseSource,
    choose_release_build,
    official_source,
    platform_key,
)
from app.core.launch.release_pins import Pin
from app.core.problem import UserError, error_detail
from app.core.text import T, Text

logger = logging.getLogger(__name__)

PART_SUFFIX = ".part"
# faults after which the downloads are kept for the next try (download.py keeps the partial file for the same ones)
KEEP_PARTIAL = (HubFault.UNREACHABLE, HubFault.PROXY, HubFault.RATE_LIMITED, HubFault.GATED)
OLD_SUFFIX = ".old"


class FetchFault(StrEnum):
    NO_BUILD = "no_build"  # no build of the release fits (or none for this system)
    NOT_PINNED = "not_pinned"  # no SHA-256 to check an archive against (none held, none published or the listing
    # could not be read): refused before downloading
    DIGESTS_DIFFER = "digests_differ"  # the digest GitHub publishes differs from the one the app holds: refused
    NOT_IN_RELEASE = "not_in_release"  # the release's listing has no such archive (renamed): refused
    DOWNLOAD = "download"  # the release server or the network (the sentence says which)
    DIGEST = "digest"  # the bytes are not the expected ones (held or published)
    ARCHIVE = "archive"  # the archive cannot be unpacked (damaged, truncated) or would write outside its folder
    INCOMPLETE = "incomplete"  # files the build needs are not there
    CARD_NOT_LISTED = "card_not_listed"  # --list-devices does not show this card
    GENERATION = "generation"  # the tiny model did not generate on the card
    DISK = "disk"  # writing the folder failed


@dataclass
class EngineFetchError(UserError):
    kind: FetchFault = FetchFault.DOWNLOAD


class Phase(StrEnum):
    DOWNLOAD = "download"
    UNPACK = "unpack"
    LIST_DEVICES = "list_devices"
    GENERATE = "generate"
    DONE = "done"


@dataclass(frozen=True)
class FetchProgress:
    phase: Phase
    sentence: Text
    download: DownloadProgress | None = None  # bytes, speed and time left while downloading


class DigestSource(StrEnum):
    APP = "app"  # the SHA-256 the app holds (release_pins.py)
    GITHUB = "github"  # the SHA-256 GitHub publishes for the asset in the release's listing


@dataclass(frozen=True)
class ArchiveCheck:
    """One archive to download and what its bytes must be: SHA-256 and size, and whose they are."""

    name: str
    url: str
    sha256: str
    size: int
    source: DigestSource

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "url": self.url, "sha256": self.sha256, "size": self.size,
                "digest_source": self.source.value}


@dataclass(frozen=True)
class FetchPlan:
    """What a fetch would do, said before it starts: the build, why, the archives and their size, and whether the
    app can check them (``refusal``: the sentence when it cannot); ``archives``: each archive's expected SHA-256,
    size and whose they are, ``checked_against``: the sentence that says it."""

    build: ReleaseBuild | None
    reason: Text
    urls: tuple[str, ...]
    total_bytes: int | None
    refusal: EngineFetchError | None
    evidence: tuple[str, ...] = ()
    archives: tuple[ArchiveCheck, ...] = ()
    checked_against: Text | None = None


Progress = Callable[[FetchProgress], None]
StopFn = Callable[[], StopReason | None]


def plan_fetch(card: CardFacts, *, build: BuildKind | None = None, source: ReleaseSource | None = None,
               key: str | None = None, proxy: str | None = None) -> FetchPlan:
    """The build for ``card`` and what fetching it takes: the release's listing is read (one request to GitHub's
    API, through ``proxy`` when given, else the system's) when the source has one; no archive is downloaded."""
    source = source or official_source()
    key = key if key is not None else platform_key()
    pick = choose_release_build(card, key, wanted=build, tag=source.tag)
    if pick.chosen is None:
        error = EngineFetchError(pick.reason, _no_build_step(build), pick.evidence(), kind=FetchFault.NO_BUILD)
        return FetchPlan(None, pick.reason, (), None, error, pick.evidence())
    chosen = pick.chosen
    urls = tuple(source.url(asset) for asset in chosen.assets)
    checks, refusal, seen = _archive_checks(chosen, source, proxy)
    evidence = (*pick.evidence(), *seen)
    if refusal is not None:
        return FetchPlan(chosen, pick.reason, urls, None, refusal, evidence)
    return FetchPlan(chosen, pick.reason, urls, sum(check.size for check in checks), None, evidence, checks,
                     _checked_against(checks, source.tag))


def get_gpu_engine(card: CardFacts, *, build: BuildKind | None = None, source: ReleaseSource | None = None,
                   key: str | None = None, on_progress: Progress = lambda p: None,
                   should_stop: StopFn = lambda: None, model: Path | None = None, proxy: str | None = None,
                   plan: FetchPlan | None = None) -> fetched_engines.FetchedEngine:
    """Fetch, check and list the build for ``card``; EngineFetchError (one sentence and a next step) on any
    failure, DownloadStopped when ``should_stop`` says pause or cancel. ``model``: the small GGUF to generate with
    (default: the engine check's Q4_0 model, made once in the cache folder). ``proxy``: the user's own for every
    request (None: the system's). ``plan``: the one plan_fetch just made for this card, build and source (None:
    planned here)."""
    source = source or official_source()
    plan = plan or plan_fetch(card, build=build, source=source, key=key, proxy=proxy)
    if plan.refusal is not None:
        raise plan.refusal
    chosen = plan.build
    assert chosen is not None  # a plan without a refusal has a build
    checks = plan.archives
    downloads = _engines_folder() / "downloads"
    access = HubAccess(endpoint=source.base_url, proxy=proxy)
    archives = _download(chosen, checks, source, access, downloads, on_progress, should_stop)
    staging = downloads.parent / (chosen.folder_name + PART_SUFFIX)
    try:
        launcher, device = _unpack_and_check(card, chosen, archives, staging, on_progress, should_stop, model)
        engine = _install(chosen, source, staging, launcher, device)
    except DownloadStopped as stopped:
        _discard(staging)
        if stopped.reason is StopReason.CANCEL:
            _remove_downloads(checks, source, downloads)
        raise
    except BaseException:  # a refused archive or a failed check: nothing of it is kept
        _discard(staging)
        _remove_downloads(checks, source, downloads)
        raise
    _remove_downloads(checks, source, downloads)
    on_progress(FetchProgress(Phase.DONE, _ready(chosen, card, checks, source.tag)))
    return engine


# --- what each archive is checked against -----------------------------------------------------------------------


def _archive_checks(build: ReleaseBuild, source: ReleaseSource, proxy: str | None
                    ) -> tuple[tuple[ArchiveCheck, ...], EngineFetchError | None, tuple[str, ...]]:
    """Each archive's SHA-256 and size: the app's pin decides; without one, the release listing's. A refusal when
    an archive has neither, when the two differ, or when the listing lacks an archive."""
    listing, unavailable = _listing(source, proxy)
    evidence: list[str] = []
    if listing is not None:
        evidence.append(f"release listing: {listing.api_url} ({len(listing.assets)} assets)")
        absent = [asset for asset in build.assets if asset not in listing.assets]
        if absent:
            return (), _not_in_release(build, source, listing, absent), tuple(evidence)
    elif unavailable is not None:
        evidence += [f"release listing not read: {unavailable.why.render('en')}", *unavailable.evidence]
    checks: list[ArchiveCheck] = []
    unchecked: list[str] = []
    differ: list[tuple[str, Pin, int, str | None]] = []
    for asset in build.assets:
        pin = source.pins.get(asset)
        published = listing.assets.get(asset) if listing is not None else None
        if pin is not None:
            if published is not None and (published.size != pin.size
                                          or published.sha256 not in (None, pin.sha256)):
                differ.append((asset, pin, published.size, published.sha256))
            checks.append(ArchiveCheck(asset, source.url(asset), pin.sha256, pin.size, DigestSource.APP))
        elif published is not None and published.sha256 is not None:
            checks.append(ArchiveCheck(asset, source.url(asset), published.sha256, published.size,
                                       DigestSource.GITHUB))
        else:
            unchecked.append(asset)
            if published is not None:
                evidence.append(f"{asset}: the listing's digest is {published.digest or 'none'}")
    evidence += [f"sha256 {check.sha256} size {check.size} ({check.source.value}): {check.name}" for check in checks]
    if differ:
        return (), _digests_differ(build, source, differ), tuple(evidence)
    if unchecked:
        if listing is None:
            return (), _not_pinned(build, source, unchecked, unavailable), tuple(evidence)
        return (), _not_published(build, source, unchecked), tuple(evidence)
    return tuple(checks), None, tuple(evidence)


def _listing(source: ReleaseSource, proxy: str | None) -> tuple[ReleaseListing | None, ListingUnavailable | None]:
    if source.api_url is None or source.api_base is None:
        return None, None
    try:
        return read_release(source.api_url, HubAccess(endpoint=source.api_base, proxy=proxy)), None
    except ListingUnavailable as error:
        logger.info("the release listing %s could not be read: %s", source.api_url, error)
        return None, error


def _checked_against(checks: Sequence[ArchiveCheck], tag: str) -> Text:
    pinned = [check.name for check in checks if check.source is DigestSource.APP]
    published = [check.name for check in checks if check.source is DigestSource.GITHUB]
    if not published:
        return T("Each archive is checked against the SHA-256 the app holds for it before it is unpacked.",
                 "每个压缩包在解压前都会与应用保存的 SHA-256 核对。")
    if not pinned:
        return T("Each archive is checked against the SHA-256 GitHub publishes for it in llama.cpp's release {tag} "
                 "before it is unpacked.", "每个压缩包在解压前都会与 GitHub 在 llama.cpp {tag} 版发布中为其公布的 "
                 "SHA-256 核对。", tag=tag)
    return T("Before anything is unpacked, {pinned} is checked against the SHA-256 the app holds for it, and "
             "{published} against the SHA-256 GitHub publishes for it in llama.cpp's release {tag}.",
             "解压前，{pinned} 会与应用保存的 SHA-256 核对，{published} 会与 GitHub 在 llama.cpp {tag} 版发布中为其"
             "公布的 SHA-256 核对。", pinned=", ".join(pinned), published=", ".join(published), tag=tag)


def _ready(build: ReleaseBuild, card: CardFacts, checks: Sequence[ArchiveCheck], tag: str) -> Text:
    if all(check.source is DigestSource.APP for check in checks):
        return T("The {label} build of llama.cpp is ready and can use the {card}; every archive matched the SHA-256 "
                 "the app holds for it.", "llama.cpp 的 {label} 版本已就绪，可以使用 {card}；每个压缩包都与应用保存的 "
                 "SHA-256 一致。", label=build.label, card=card.name)
    if all(check.source is DigestSource.GITHUB for check in checks):
        return T("The {label} build of llama.cpp is ready and can use the {card}; every archive matched the SHA-256 "
                 "GitHub publishes for it in llama.cpp's release {tag}.",
                 "llama.cpp 的 {label} 版本已就绪，可以使用 {card}；每个压缩包都与 GitHub 在 llama.cpp {tag} "
                 "版发布中为其公布的 SHA-256 一致。", label=build.label, card=card.name, tag=tag)
    return T("The {label} build of llama.cpp is ready and can use the {card}; every archive matched the SHA-256 the "
             "app holds for it or, where it holds none, the one GitHub publishes for it in llama.cpp's release {tag}.",
             "llama.cpp 的 {label} 版本已就绪，可以使用 {card}；每个压缩包都与应用保存的 SHA-256 一致，"
             "应用未保存的则与 GitHub 在 llama.cpp {tag} 版发布中为其公布的 SHA-256 一致。", label=build.label,
             card=card.name, tag=tag)


# --- download --------------------------------------------------------------------------------------------------


def _model(check: ArchiveCheck, source: ReleaseSource) -> HubModel:
    return HubModel(f"llama.cpp/{source.tag}", check.name, None,
                    (HubFile(check.name, check.size, check.sha256, check.url),))


def _download(build: ReleaseBuild, checks: Sequence[ArchiveCheck], source: ReleaseSource, access: HubAccess,
              downloads: Path, on_progress: Progress, should_stop: StopFn) -> list[Path]:
    archives: list[Path] = []
    for index, check in enumerate(checks, start=1):
        def report(progress: DownloadProgress, index: int = index, asset: str = check.name) -> None:
            on_progress(FetchProgress(Phase.DOWNLOAD, T("Downloading {name} ({index} of {count}): {progress}",
                                                        "正在下载 {name}（第 {index}/{count} 个）：{progress_zh}",
                                                        name=asset, index=index, count=len(build.assets),
                                                        progress=progress.sentence().render("en"),
                                                        progress_zh=progress.sentence().render("zh")), progress))
        try:
            archives.append(download_model(_model(check, source), access, folder=downloads,
                                           on_progress=report, should_stop=should_stop))
        except DownloadStopped as stopped:
            if stopped.reason is StopReason.CANCEL:
                _remove_downloads(checks, source, downloads)
            raise
        except HubError as error:
            if error.kind not in KEEP_PARTIAL:
                _remove_downloads(checks, source, downloads)
            raise _download_error(error, check, source) from error
    return archives


def _remove_downloads(checks: Sequence[ArchiveCheck], source: ReleaseSource, downloads: Path) -> None:
    for check in checks:
        remove_model_files(_model(check, source), downloads)


def _download_error(error: HubError, check: ArchiveCheck, source: ReleaseSource) -> EngineFetchError:
    """The downloader's sentence, re-said where it names the Hub (this is llama.cpp's release server)."""
    asset = check.name
    evidence = (*error.evidence, f"url: {check.url}", f"expected sha256 {check.sha256} size {check.size} "
                f"({check.source.value})", f"downloader said: {error.message.render('en')}")
    if error.evidence and error.evidence[0].startswith("expected "):
        return EngineFetchError(_digest_mismatch(asset, check.source, source.tag), _digest_step(check.source),
                                evidence, kind=FetchFault.DIGEST)
    if error.kind is HubFault.BAD_ANSWER:
        if check.source is DigestSource.GITHUB:
            message = T("{name} did not arrive as the file GitHub lists in llama.cpp's release {tag} (its size and "
                        "SHA-256), so it was not kept.",
                        "{name} 下载到的内容与 GitHub 在 llama.cpp {tag} 版发布中列出的文件（大小和 SHA-256）不符，"
                        "因此未保留。", name=asset, tag=source.tag)
        else:
            message = T("{name} did not arrive as the file the app holds a SHA-256 and size for, so it was not kept.",
                        "{name} 下载到的内容与应用保存的 SHA-256 和大小不符，因此未保留。", name=asset)
        return EngineFetchError(message, T("Try again later.", "请稍后重试。"), evidence, kind=FetchFault.DIGEST)
    if error.kind is HubFault.NOT_FOUND:
        return EngineFetchError(
            T("llama.cpp's release server has no {name} for release {tag} (404).",
              "llama.cpp 的发布服务器上没有 {tag} 版的 {name}（404）。", name=asset, tag=source.tag),
            _manual_step(), evidence, kind=FetchFault.DOWNLOAD)
    if error.kind in (HubFault.GATED, HubFault.RATE_LIMITED):
        return EngineFetchError(
            T("llama.cpp's release server refused {name} ({status}).",
              "llama.cpp 的发布服务器拒绝了 {name} 的下载（{status}）。", name=asset, status=error.status or "?"),
            T("Wait a while, then try again; what was downloaded is kept.", "请稍等后重试；已下载的部分会保留。"),
            evidence, kind=FetchFault.DOWNLOAD)
    if error.kind is HubFault.UNREACHABLE:
        return EngineFetchError(error.message, T("Check the internet connection, then try again; what was "
                                                 "downloaded is kept and the next try continues it.",
                                                 "请检查网络连接后重试；已下载的部分会保留，下次会接着下载。"),
                                evidence, kind=FetchFault.DOWNLOAD)
    if error.kind is HubFault.SERVER and error.status is not None:
        return EngineFetchError(error.message, T("Try again later.", "请稍后重试。"), evidence,
                                kind=FetchFault.DOWNLOAD)
    return EngineFetchError(error.message, error.next_step, evidence, kind=FetchFault.DOWNLOAD)


# --- unpack and check --------------------------------------------------------------------------------------------


def _unpack_and_check(card: CardFacts, build: ReleaseBuild, archives: Sequence[Path], staging: Path,
                      on_progress: Progress, should_stop: StopFn, model: Path | None) -> tuple[Path, ListedDevice]:
    def check_stop() -> None:
        reason = should_stop()
        if reason is not None:
            raise DownloadStopped(reason)

    _discard(staging)
    on_progress(FetchProgress(Phase.UNPACK, T("Unpacking the {label} build ...", "正在解压 {label} 版本……",
                                              label=build.label)))
    for archive in archives:
        _unpack_one(archive, staging, check_stop)
    launcher = _checked_folder(build, staging)
    check_stop()
    on_progress(FetchProgress(Phase.LIST_DEVICES, T("Asking the {label} build which graphics cards it sees ...",
                                                    "正在询问 {label} 版本能看到哪些显卡……", label=build.label)))
    device = _listed_card(card, build, launcher, should_stop)
    check_stop()
    on_progress(FetchProgress(Phase.GENERATE, T("Generating a few words with a small test model on the {card} ...",
                                                "正在 {card} 上用小型测试模型生成几个词……", card=card.name)))
    _generates(card, build, launcher, device, should_stop, model)
    return launcher, device


def _unpack_one(archive: Path, staging: Path, check_stop: Callable[[], None]) -> None:
    try:
        unpack(archive, staging, check_stop)
    except UnsafeArchive as error:
        raise EngineFetchError(
            T("{name} was not unpacked: its entry {entry} is {why}, and the app unpacks no such entry.",
              "{name} 未被解压：其中的条目 {entry} 是{why_zh}，应用不会解压这样的条目。",
              name=archive.name, entry=error.entry, why=error.why.render("en"), why_zh=error.why.render("zh")),
            _manual_step(), (str(error),), kind=FetchFault.ARCHIVE) from error
    except ArchiveRefused as error:
        raise _refused_archive(archive, error) from error
    except BadArchive as error:
        raise EngineFetchError(
            T("{name} cannot be unpacked: the archive is damaged or incomplete ({detail}); nothing was kept.",
              "无法解压 {name}：压缩包已损坏或不完整（{detail}）；没有保留任何文件。", name=archive.name,
              detail=str(error)), T("Try again later.", "请稍后重试。"), (str(error),),
            kind=FetchFault.ARCHIVE) from error
    except OSError as error:
        raise EngineFetchError(
            T("Unpacking {name} into {folder} failed ({detail}); nothing was kept.",
              "将 {name} 解压到 {folder} 失败（{detail}）；没有保留任何文件。", name=archive.name,
              folder=str(staging.parent), detail=error.strerror or error_detail(error)),
            T("Free some space on that disk, or check that the folder can be written, then try again.",
              "请在该磁盘上腾出空间，或检查该文件夹是否可写，然后重试。"), kind=FetchFault.DISK) from error


def _refused_archive(archive: Path, error: ArchiveRefused) -> EngineFetchError:
    message = T("{name} was not unpacked: {why}; nothing was kept.", "{name} 未被解压：{why_zh}；没有保留任何文件。",
                name=archive.name, why=error.why.render("en"), why_zh=error.why.render("zh"))
    if error.disk:
        return EngineFetchError(message, T("Free some space on that disk, then try again.",
                                           "请在该磁盘上腾出空间，然后重试。"), (str(error),), kind=FetchFault.DISK)
    return EngineFetchError(message, _manual_step(), (str(error),), kind=FetchFault.ARCHIVE)


def _checked_folder(build: ReleaseBuild, staging: Path) -> Path:
    launcher = find_launcher(staging)
    if launcher is None:
        raise EngineFetchError(
            T("After unpacking the {label} build, its llama-server program is not there: the archive holds none, or "
              "an antivirus program removed it at once.",
              "解压 {label} 版本后找不到其中的 llama-server 程序：压缩包中没有它，或者它被杀毒软件立即删除了。",
              label=build.label),
            _manual_step(), tuple(sorted(path.name for path in staging.iterdir())[:20]), kind=FetchFault.INCOMPLETE)
    folder = check_engine_folder(launcher, search_dirs=[], linker_cache=b"")  # the build must carry its own
    problem = folder.problem()
    if problem is not None:
        raise EngineFetchError(problem, _manual_step(), folder.evidence(), kind=FetchFault.INCOMPLETE)
    return launcher


def _listed_card(card: CardFacts, build: ReleaseBuild, launcher: Path, should_stop: StopFn) -> ListedDevice:
    backend = build.backends[0]
    listing = list_devices(launcher, should_stop=lambda: should_stop() is not None)
    reason = should_stop()
    if reason is not None:
        raise DownloadStopped(reason)
    devices = listing.devices
    found = card_device(devices, card.name, backend) if devices is not None else None
    if found is not None:
        return found
    if listing.ended == "timeout":
        message = T("The downloaded {label} build did not say within {s:.0f} s which graphics cards it can use, so it "
                    "was stopped.", "下载的 {label} 版本在 {s:.0f} 秒内没有说明它能使用哪些显卡，因此已将其停止。",
                    label=build.label, s=device_list.LIST_TIMEOUT_S)
    elif listing.ended == "output":
        message = T("Asked which graphics cards it can use, the downloaded {label} build wrote far more than such a "
                    "list, so it was stopped.", "询问下载的 {label} 版本能使用哪些显卡时，它输出的内容远超这样的列表，"
                    "因此已将其停止。", label=build.label)
    elif devices is None:
        message = T("The downloaded {label} build could not list the graphics cards it can use (exit code {code}).",
                    "下载的 {label} 版本无法列出它能使用的显卡（退出代码 {code}）。", label=build.label,
                    code="none" if listing.returncode is None else listing.returncode)
    elif not devices:
        message = T("The downloaded {label} build does not see the {card}: it lists no graphics card.",
                    "下载的 {label} 版本看不到 {card}：它没有列出任何显卡。", label=build.label, card=card.name)
    else:
        shown = ", ".join(device.line for device in devices)
        message = T("The downloaded {label} build does not list the {card}; it lists {shown}.",
                    "下载的 {label} 版本没有列出 {card}；它列出的是 {shown}。", label=build.label, card=card.name,
                    shown=shown)
    raise EngineFetchError(message, _card_step(build), listing.tail, kind=FetchFault.CARD_NOT_LISTED)


def _generates(card: CardFacts, build: ReleaseBuild, launcher: Path, device: ListedDevice,
               should_stop: StopFn, model: Path | None) -> None:
    from app.core.engine.selftest import selftest_models
    from app.core.server.gpu_generation import generate_on_device

    model = model or selftest_models(("Q4_0",))["Q4_0"]
    check = generate_on_device(launcher, device.name, model, should_stop=lambda: should_stop() is not None)
    if check.failure == "stopped":
        raise DownloadStopped(should_stop() or StopReason.CANCEL)
    if check.ok:
        return
    if check.failure is None and not check.on_device:
        message = T("The downloaded {label} build generated text, but on the processor: the {card} ({device}) did "
                    "not hold the test model.",
                    "下载的 {label} 版本生成了文字，但是在处理器上：{card}（{device}）没有载入测试模型。",
                    label=build.label, card=card.name, device=device.name)
    else:
        message = T("The downloaded {label} build could not generate with a small test model on the {card} "
                    "({detail}).", "下载的 {label} 版本无法在 {card} 上用小型测试模型生成文字（{detail}）。",
                    label=build.label, card=card.name, detail=check.failure or "no tokens")
    raise EngineFetchError(message, _card_step(build), check.tail, kind=FetchFault.GENERATION)


# --- install -----------------------------------------------------------------------------------------------------


def _install(build: ReleaseBuild, source: ReleaseSource, staging: Path, launcher: Path,
             device: ListedDevice) -> fetched_engines.FetchedEngine:
    """Rename the checked folder into place, then list it; an older copy of the same build is set aside and deleted
    only once the new one is listed (put back when listing fails)."""
    final = staging.with_name(build.folder_name)
    old = staging.with_name(build.folder_name + OLD_SUFFIX)
    try:
        _discard(old)
        if final.exists():
            os.replace(final, old)
        os.replace(staging, final)
    except OSError as error:
        _put_back(old, final)
        raise EngineFetchError(
            T("The checked {label} build could not be moved into {folder} ({detail}).",
              "检查通过的 {label} 版本无法移动到 {folder}（{detail}）。", label=build.label, folder=str(final),
              detail=error.strerror or error_detail(error)),
            T("Close programs that use files in that folder, then try again.",
              "请关闭正在使用该文件夹中文件的程序，然后重试。"), kind=FetchFault.DISK) from error
    try:
        engine = fetched_engines.register(build.kind.value, build.label, source.tag, final, final / launcher.name,
                                          device.line)
    except OSError as error:
        _discard(final)
        _put_back(old, final)
        raise EngineFetchError(
            T("The checked {label} build could not be added to the list of downloaded builds ({detail}), so it was "
              "not kept.", "检查通过的 {label} 版本无法加入已下载版本的列表（{detail}），因此未保留。",
              label=build.label, detail=fetched_engines.os_detail(error)), _data_step(), kind=FetchFault.DISK
        ) from error
    _discard(old)
    return engine


def _put_back(old: Path, final: Path) -> None:
    """The older copy set aside, back in its place (when the new one did not take it)."""
    if old.exists() and not final.exists():
        try:
            os.replace(old, final)
        except OSError:
            logger.warning("the earlier copy %s could not be put back as %s", old, final, exc_info=True)


def _engines_folder() -> Path:
    try:
        return fetched_engines.engines_folder()
    except OSError as error:
        raise EngineFetchError(
            T("The app's data folder cannot hold a GPU build ({detail}), so nothing was downloaded.",
              "应用的数据文件夹无法存放显卡版本（{detail}），因此没有下载任何内容。",
              detail=fetched_engines.os_detail(error)), _data_step(), kind=FetchFault.DISK) from error


def _data_step() -> Text:
    return T("Check that the app's data folder can be written and its disk has free space, then try again.",
             "请检查应用的数据文件夹是否可写、所在磁盘是否有可用空间，然后重试。")


def _discard(folder: Path) -> None:
    if folder.is_symlink() or folder.is_file():  # never followed: what a link points to is not the app's
        folder.unlink(missing_ok=True)
    elif folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
        if folder.exists():
            logger.warning("%s could not be removed completely", folder)


# --- sentences ---------------------------------------------------------------------------------------------------


def _digest_mismatch(asset: str, whose: DigestSource, tag: str) -> Text:
    if whose is DigestSource.GITHUB:
        return T("{name} does not match the SHA-256 GitHub publishes for it in llama.cpp's release {tag}, so it was "
                 "not kept; the downloaded part was removed.",
                 "{name} 与 GitHub 在 llama.cpp {tag} 版发布中为其公布的 SHA-256 不一致，因此未保留；"
                 "已删除下载的部分。",
                 name=asset, tag=tag)
    return T("{name} does not match the SHA-256 the app holds for it, so it was not kept; the downloaded part was "
             "removed.", "{name} 与应用保存的 SHA-256 不一致，因此未保留；已删除下载的部分。", name=asset)


def _digest_step(whose: DigestSource) -> Text:
    if whose is DigestSource.GITHUB:
        return T("Try again later; if the same happens, something between this computer and GitHub changes the "
                 "file (a proxy or a security program), or the file on the release page is damaged: download the "
                 "build yourself from llama.cpp's release page and choose its llama-server in Settings (Advanced).",
                 "请稍后重试；如果仍然如此，说明这台电脑与 GitHub 之间有程序（代理或安全软件）改动了文件，"
                 "或者发布页上的文件已损坏：请自行从 llama.cpp 的发布页下载该版本，"
                 "并在设置（高级）中选择其中的 llama-server。")
    return T("Try again later; if the same happens, the file on the release server is not the one this app was "
             "made for: download the build yourself from llama.cpp's release page and choose its llama-server in "
             "Settings (Advanced).",
             "请稍后重试；如果仍然如此，说明发布服务器上的文件不是本应用所对应的版本：请自行从 llama.cpp 的发布页下载"
             "该版本，并在设置（高级）中选择其中的 llama-server。")


def _manual_build_step(build: ReleaseBuild, source: ReleaseSource) -> Text:
    return T("Download the {label} build of llama.cpp {tag} yourself from llama.cpp's release page and choose its "
             "llama-server in Settings (Advanced).",
             "请自行从 llama.cpp 的发布页下载 llama.cpp {tag} 的 {label} 版本，并在设置（高级）中选择其中的 "
             "llama-server。", label=build.label, tag=source.tag)


def _not_pinned(build: ReleaseBuild, source: ReleaseSource, missing: list[str],
                unavailable: ListingUnavailable | None) -> EngineFetchError:
    """No SHA-256 held, and no listing: none asked for (a source without one) or it could not be read."""
    evidence = tuple(f"no SHA-256 held: {source.url(name)}" for name in missing)
    if unavailable is None:
        return EngineFetchError(
            T("The app holds no SHA-256 for {names}, so it does not download the {label} build: an archive it cannot "
              "check is never unpacked.",
              "应用没有保存 {names} 的 SHA-256，因此不会下载 {label} 版本：无法校验的压缩包绝不会被解压。",
              names=", ".join(missing), label=build.label),
            _manual_build_step(build, source), evidence, kind=FetchFault.NOT_PINNED)
    return EngineFetchError(
        T("The app holds no SHA-256 for {names} and could not read the one GitHub publishes for {it} in llama.cpp's "
          "release {tag} ({why}), so it does not download the {label} build: an archive it cannot check is never "
          "unpacked.",
          "应用没有保存 {names} 的 SHA-256，也无法读取 GitHub 在 llama.cpp {tag} 版发布中为其公布的 SHA-256"
          "（{why_zh}），因此不会下载 {label} 版本：无法校验的压缩包绝不会被解压。", names=", ".join(missing),
          it="it" if len(missing) == 1 else "each", tag=source.tag, why=unavailable.why.render("en"),
          why_zh=unavailable.why.render("zh"), label=build.label),
        T("{step} Or download the {label} build of llama.cpp {tag} yourself from llama.cpp's release page and choose "
          "its llama-server in Settings (Advanced).",
          "{step_zh}或者自行从 llama.cpp 的发布页下载 llama.cpp {tag} 的 {label} 版本，并在设置（高级）中选择其中的 "
          "llama-server。", step=unavailable.step.render("en"), step_zh=unavailable.step.render("zh"),
          label=build.label, tag=source.tag),
        (*evidence, f"listing: {source.api_url}", *unavailable.evidence), kind=FetchFault.NOT_PINNED)


def _not_published(build: ReleaseBuild, source: ReleaseSource, missing: list[str]) -> EngineFetchError:
    return EngineFetchError(
        T("GitHub publishes no SHA-256 for {names} in llama.cpp's release {tag}, and the app holds none, so it does "
          "not download the {label} build: an archive it cannot check is never unpacked.",
          "GitHub 没有在 llama.cpp {tag} 版发布中公布 {names} 的 SHA-256，应用也没有保存，因此不会下载 {label} 版本："
          "无法校验的压缩包绝不会被解压。", names=", ".join(missing), tag=source.tag, label=build.label),
        _manual_build_step(build, source),
        (*(f"no SHA-256 held or published: {source.url(name)}" for name in missing), f"listing: {source.api_url}"),
        kind=FetchFault.NOT_PINNED)


def _digests_differ(build: ReleaseBuild, source: ReleaseSource,
                    differ: Sequence[tuple[str, Pin, int, str | None]]) -> EngineFetchError:
    name, pin, size, sha256 = differ[0]
    what, what_zh = (("SHA-256", "SHA-256") if sha256 not in (None, pin.sha256) and size == pin.size
                     else ("size", "大小") if sha256 in (None, pin.sha256) else ("SHA-256 and size", "SHA-256 和大小"))
    return EngineFetchError(
        T("The {what} GitHub publishes for {name} in llama.cpp's release {tag} differs from the one the app holds, "
          "so it does not download the {label} build: when the two disagree, neither is trusted.",
          "GitHub 在 llama.cpp {tag} 版发布中为 {name} 公布的 {what_zh} 与应用保存的不一致，因此不会下载 {label} 版本："
          "两者不一致时，哪一个都不可信。", what=what, what_zh=what_zh, name=name, tag=source.tag,
          label=build.label),
        T("Update the app, or download the {label} build yourself from llama.cpp's release page and choose its "
          "llama-server in Settings (Advanced).",
          "请更新应用，或自行从 llama.cpp 的发布页下载 {label} 版本，并在设置（高级）中选择其中的 llama-server。",
          label=build.label),
        tuple(line for asset, held, published_size, published_sha in differ
              for line in (f"{asset}: the app holds sha256 {held.sha256} size {held.size}",
                           f"{asset}: GitHub publishes sha256 {published_sha or 'none'} size {published_size}")),
        kind=FetchFault.DIGESTS_DIFFER)


def _not_in_release(build: ReleaseBuild, source: ReleaseSource, listing: ReleaseListing,
                    absent: list[str]) -> EngineFetchError:
    alike = list(dict.fromkeys(shown_name(other) for name in absent for other in listing.look_alike(name)))
    names = ", ".join(absent)
    if alike:
        message = T("llama.cpp's release {tag} on GitHub has no {names}, so the {label} build cannot be downloaded; "
                    "names it has that look alike: {alike}.",
                    "GitHub 上 llama.cpp 的 {tag} 版发布中没有 {names}，因此无法下载 {label} 版本；其中名称相近的有："
                    "{alike}。", tag=source.tag, names=names, label=build.label, alike=", ".join(alike))
    else:
        message = T("llama.cpp's release {tag} on GitHub has no {names}, so the {label} build cannot be downloaded, "
                    "and no file of the release has a name like it.",
                    "GitHub 上 llama.cpp 的 {tag} 版发布中没有 {names}，因此无法下载 {label} 版本，该发布中也没有名称"
                    "相近的文件。", tag=source.tag, names=names, label=build.label)
    listed = sorted(listing.assets)
    return EngineFetchError(
        message,
        T("Update the app, or download the {label} build yourself from llama.cpp's release page and choose its "
          "llama-server in Settings (Advanced).",
          "请更新应用，或自行从 llama.cpp 的发布页下载 {label} 版本，并在设置（高级）中选择其中的 llama-server。",
          label=build.label),
        (f"listing: {listing.api_url}", *(f"not listed: {name}" for name in absent),
         f"listed ({len(listed)}): {', '.join(shown_name(name) for name in listed[:40])}"),
        kind=FetchFault.NOT_IN_RELEASE)


def _manual_step() -> Text:
    return T("Download the build yourself from llama.cpp's release page and choose its llama-server in Settings "
             "(Advanced).", "请自行从 llama.cpp 的发布页下载该版本，并在设置（高级）中选择其中的 llama-server。")


def _no_build_step(build: BuildKind | None) -> Text:
    if build is not None:
        return T("Let the app choose the build, or update the NVIDIA driver.",
                 "请让应用自动选择版本，或更新 NVIDIA 驱动。")
    return T("Use the built-in engine on the processor.", "请使用处理器上的内置引擎。")


def _card_step(build: ReleaseBuild) -> Text:
    if build.kind is BuildKind.VULKAN:
        return T("Install or update the NVIDIA driver (it brings the card's Vulkan support; Linux also needs the "
                 "Vulkan loader, libvulkan1), then try again.",
                 "请安装或更新 NVIDIA 驱动（其中包含显卡的 Vulkan 支持；Linux 还需要 Vulkan 加载器 libvulkan1），"
                 "然后重试。")
    return T("Update the NVIDIA driver and try again, or try the Vulkan build.",
             "请更新 NVIDIA 驱动后重试，或改用 Vulkan 版本。")
