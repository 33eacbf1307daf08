"""Download a model from the Hub into the app's model folder so that nothing can go wrong: the disk space checked
first, each file written to ``<name>.part`` beside its place and renamed only after the SHA-256 computed while it
arrived equals the one the Hub publishes, a dropped connection retried (a Range request continues where it broke),
an earlier partial continued (its bytes hashed again, so the verification covers the whole file), every shard of a
split model, pause (the partial is kept) and cancel (it is removed). A model already in the folder, verified by its
hash (the app's hash cache makes that instant after the first time), is not fetched again.

The byte loop is in download_fetch (why not huggingface_hub's own download: see there).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.core.hub import download_errors as errors
from app.core.hub.download_fetch import RETRY_DELAYS_S, PartJob, TooLong, fetch_part, rehash_prefix
from app.core.hub.download_progress import DownloadProgress, DownloadStopped, Meter, StopReason
from app.core.hub.errors import HubError, HubFault, hub_error
from app.core.hub.files import HubFile, HubModel
from app.core.hub.source import HubAccess
from app.core.problem import error_detail
from app.core.text import Text

logger = logging.getLogger(__name__)

PARTIAL_SUFFIX = ".part"
SPACE_MARGIN = 100 << 20  # left free beyond the model: the app's logs, caches and the rest of the system
# Fixable faults: the partial file is kept and the next call continues it.
_KEEP_PARTIAL = (HubFault.UNREACHABLE, HubFault.PROXY, HubFault.RATE_LIMITED, HubFault.GATED)

FreeBytes = Callable[[Path], int]
_ACTIVE: set[str] = set()  # the model folders a download in this process is writing
_ACTIVE_LOCK = threading.Lock()


def models_folder() -> Path:
    """The app's model folder: under the app's data folder when that path is plain ASCII without spaces (what the
    path check wants), else the next such place (``gguf-models`` in the home folder, then a fixed one)."""
    from app.core.gguf.path_checks import safe_model_dir

    folder = safe_model_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def model_dir(model: HubModel, folder: Path | None = None) -> Path:
    """Where ``model``'s files go: ``<models folder>/<owner>/<name>/`` (repository names are ASCII)."""
    owner, _, name = model.repo.partition("/")
    return (folder or models_folder()) / owner / (name or owner)


def part_path(model: HubModel, part: HubFile, folder: Path | None = None) -> Path:
    return model_dir(model, folder) / part.path.rsplit("/", 1)[-1]


def partial_path(final: Path) -> Path:
    return final.with_name(final.name + PARTIAL_SUFFIX)


def unverified_notice(model: HubModel) -> Text | None:
    """The sentence to show before downloading parts the Hub publishes no SHA-256 for; None when all have one."""
    names = [p.path.rsplit("/", 1)[-1] for p in model.parts if not p.sha256]
    return errors.unverified(names) if names else None


def _verified(path: Path, part: HubFile) -> bool:
    """``path`` is this part: its size, and its SHA-256 (from the app's hash cache when unchanged since hashed)."""
    from app.core.gguf.sha256 import file_sha256

    try:
        if not path.is_file() or (part.size is not None and path.stat().st_size != part.size):
            return False
        return part.sha256 is None or file_sha256(path) == part.sha256.lower()
    except OSError as error:
        logger.info("%s cannot be read to compare: %s", path, error)
        return False


def already_have(model: HubModel, folder: Path | None = None, elsewhere: Iterable[Path] = ()) -> Path | None:
    """The path to open when a complete, verified copy of ``model`` is on disk: in the model folder (every part),
    or for a single-file model one of ``elsewhere`` (e.g. the "On this computer" list) with the same size and
    SHA-256. A part without a published SHA-256 is recognised by its size only."""
    if not model.complete or not model.parts:
        return None
    paths = [part_path(model, p, folder) for p in model.parts]
    if all(_verified(path, part) for path, part in zip(paths, model.parts, strict=True)):
        return paths[0]
    if len(model.parts) == 1 and model.parts[0].sha256:
        return next((p for p in elsewhere if _verified(Path(p), model.parts[0])), None)
    return None


def free_bytes(folder: Path) -> int:
    return shutil.disk_usage(folder).free


def check_space(model: HubModel, folder: Path, remaining: int, free: FreeBytes = free_bytes) -> None:
    """HubError in one sentence with the numbers when ``folder``'s disk lacks ``remaining`` bytes and the margin
    (``folder`` need not exist yet: its nearest existing parent is asked)."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), folder)
    have = free(existing)
    need = remaining + SPACE_MARGIN
    if remaining > 0 and have < need:
        raise errors.no_space(model.name, folder, need, remaining, SPACE_MARGIN, have)


@dataclass
class DownloadStats:
    """What one download call did (the CLI's JSON reports it; tests measure it)."""

    received_bytes: int = 0  # over the network
    reread_bytes: int = 0  # of earlier partials, read again to continue their hashes
    skipped_parts: int = 0  # already complete and verified


def download_model(model: HubModel, access: HubAccess, *, folder: Path | None = None,
                   on_progress: Callable[[DownloadProgress], None] = lambda p: None,
                   should_stop: Callable[[], StopReason | None] = lambda: None,
                   on_notice: Callable[[Text], None] = lambda t: None,
                   free: FreeBytes = free_bytes, retry_delays: Sequence[float] = RETRY_DELAYS_S,
                   stats: DownloadStats | None = None, elsewhere: Iterable[Path] = ()) -> Path:
    """Download every part of ``model`` into the model folder and return the path to open (the file, or shard 1).

    HubError (one sentence and a next step) on any failure: a network failure that retrying did not cure keeps the
    partial file (the sentence says so, the next call continues); any other removes it. DownloadStopped when
    ``should_stop()`` says pause (partials kept) or cancel (this model's files removed). ``on_notice`` hears the
    sentence about parts without a published SHA-256. ``free`` reads a folder's free bytes (tests inject one).
    ``elsewhere``: files found on this computer; one that is this model (size and SHA-256) is returned instead."""
    stats = stats if stats is not None else DownloadStats()
    if not model.complete:
        raise errors.missing_parts(model.name, len(model.parts), model.expected_parts)
    have = already_have(model, folder, elsewhere)
    if have is not None:
        stats.skipped_parts = len(model.parts)
        return have
    notice = unverified_notice(model)
    if notice is not None:
        logger.warning("%s", notice.render("en"))
        on_notice(notice)
    with _claimed(model, folder):
        return _download(model, access, folder, on_progress, should_stop, free, retry_delays, stats)


@contextmanager
def _claimed(model: HubModel, folder: Path | None) -> Iterator[None]:
    """One download of a model at a time in this process (a second one would write the same partial file)."""
    key = os.path.normcase(os.path.abspath(model_dir(model, folder)))
    with _ACTIVE_LOCK:
        if key in _ACTIVE:
            raise errors.busy(model.name)
        _ACTIVE.add(key)
    try:
        yield
    finally:
        with _ACTIVE_LOCK:
            _ACTIVE.discard(key)


def _download(model: HubModel, access: HubAccess, folder: Path | None,
              on_progress: Callable[[DownloadProgress], None], should_stop: Callable[[], StopReason | None],
              free: FreeBytes, retry_delays: Sequence[float], stats: DownloadStats) -> Path:
    target = model_dir(model, folder)
    sizes = [_size(part, access) for part in model.parts]
    meter = Meter(sum(sizes), len(model.parts), on_progress)
    _check_space_left(model, target, sizes, folder, free)
    target.mkdir(parents=True, exist_ok=True)
    try:
        for index, (part, size) in enumerate(zip(model.parts, sizes, strict=True), start=1):
            meter.part = index
            _download_part(model, part, size, folder, access, meter, should_stop, retry_delays, stats)
    except DownloadStopped as stopped:
        if stopped.reason is StopReason.CANCEL:
            remove_model_files(model, folder)
        raise
    except HubError as error:
        if error.kind in _KEEP_PARTIAL:
            remove_model_files(model, folder, partials_only=True, empty_only=True)
            raise errors.kept(error, meter.done, meter.total) from error
        remove_model_files(model, folder, partials_only=True)
        raise
    meter.report(force=True)
    return part_path(model, model.parts[0], folder)


def _size(part: HubFile, access: HubAccess) -> int:
    """The part's size from the listing, else from the file's headers (huggingface_hub's HEAD request)."""
    if part.size is not None:
        return part.size
    from huggingface_hub import get_hf_file_metadata

    name = part.path.rsplit("/", 1)[-1]
    try:
        size = get_hf_file_metadata(part.url, token=access.token_arg, timeout=access.read_timeout_s).size
    except Exception as error:  # hub_error re-raises what is not a Hub failure
        raise hub_error(error, access, name) from error
    if size is None:
        raise errors.no_size(name)
    return size


def _check_space_left(model: HubModel, target: Path, sizes: list[int], folder: Path | None,
                      free: FreeBytes) -> None:
    """The disk must hold what is still to come: whole parts not yet on disk, the rest of kept partials."""
    remaining = 0
    for part, size in zip(model.parts, sizes, strict=True):
        final = part_path(model, part, folder)
        partial = partial_path(final)
        if final.is_file() and final.stat().st_size == size:
            continue  # verified (or replaced) when its turn comes
        remaining += size - (partial.stat().st_size if partial.is_file() else 0)
    check_space(model, target, max(0, remaining), free)


def _download_part(model: HubModel, part: HubFile, size: int, folder: Path | None, access: HubAccess,
                   meter: Meter, should_stop: Callable[[], StopReason | None], retry_delays: Sequence[float],
                   stats: DownloadStats) -> None:
    final = part_path(model, part, folder)
    if _verified(final, part) and final.stat().st_size == size:
        meter.add_existing(size)
        stats.skipped_parts += 1
        return
    job = PartJob(part, size, partial_path(final), access, meter, should_stop, retry_delays)
    name = job.name
    try:
        rehash_prefix(job)
        meter.report(force=True)
        start = job.offset
        fetch_part(job)
        stats.received_bytes += job.offset - start
    except TooLong as error:
        raise errors.size_mismatch(name, size, error.got) from error
    except OSError as error:
        raise errors.disk_write_failed(name, final.parent, error.strerror or error_detail(error)) from error
    finally:
        stats.reread_bytes += job.reread_bytes
    _finish(job, final)


def _finish(job: PartJob, final: Path) -> None:
    """Rename the partial into place only when its size and SHA-256 are the published ones."""
    from app.core.gguf.sha256 import remember_sha256

    got = job.digest.hexdigest()
    actual = job.partial.stat().st_size
    if actual != job.size:
        raise errors.size_mismatch(job.name, job.size, actual)
    expected = job.part.sha256
    if expected is not None and got != expected.lower():
        raise errors.hash_mismatch(job.name, expected.lower(), got)
    try:
        with open(job.partial, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(job.partial, final)  # Windows: fails while another program holds the old file open
    except OSError as error:
        raise errors.disk_write_failed(job.name, final.parent, error.strerror or error_detail(error)) from error
    remember_sha256(final, got)  # the next check of this file (already_have, the doctor) is instant
    logger.info("%s: %d bytes, SHA-256 %s%s", final, actual, got, "" if expected else " (none published)")


def remove_model_files(model: HubModel, folder: Path | None = None, partials_only: bool = False,
                       empty_only: bool = False) -> None:
    """Remove ``model``'s partial files (a refused file) and its finished ones (cancel) from the model folder, and
    its folders when that leaves them empty. A refused shard leaves the verified shards before it: the next try
    skips them."""
    for part in model.parts:
        final = part_path(model, part, folder)
        for path in (partial_path(final),) if partials_only else (partial_path(final), final):
            if empty_only and (not path.is_file() or path.stat().st_size):
                continue
            try:
                path.unlink(missing_ok=True)
            except OSError as error:
                logger.warning("%s not removed: %s", path, error)
    base = folder or models_folder()
    directory = model_dir(model, folder)
    while directory != base and base in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            break  # not empty (another model of the same repository), or already gone
        directory = directory.parent


__all__ = ["DownloadProgress", "DownloadStats", "DownloadStopped", "HubError", "StopReason", "already_have",
           "download_model", "models_folder", "unverified_notice"]
