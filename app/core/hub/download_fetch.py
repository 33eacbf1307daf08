"""One file's bytes from the Hub into its ``.part`` file: hashed while they arrive, resumed with a Range request.

Why not ``huggingface_hub.hf_hub_download``: it writes into its own cache layout (or a ``local_dir`` with its own
metadata folder), reports progress only through tqdm, cannot be paused or cancelled between chunks, and does not
give the SHA-256 of the bytes it wrote, so the app would have to read a 5 GB file a second time to verify it. The
URL, the headers (user agent, the user's token only) and the HTTP session with its redirect handling are
huggingface_hub's (``hf_hub_url``, ``build_hf_headers``, ``get_session``; ModelScope's URL and headers come from
app.core.hub.modelscope, a proxy of the user's own from app.core.hub.http); only the byte loop is ours.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from app.core.hub.download_errors import connection_lost
from app.core.hub.download_progress import DownloadStopped, Meter, StopReason
from app.core.hub.errors import HubError, HubFault, bad_answer, from_status, hub_error
from app.core.hub.files import HubFile
from app.core.hub.source import HubAccess

logger = logging.getLogger(__name__)

RETRY_DELAYS_S = (1.0, 2.0, 4.0)  # after a dropped connection: tries again this many times, waiting this long
MAX_RETRY_AFTER_S = 30  # a 429 asking to wait longer than this ends the download with its sentence
REHASH_BLOCK = 8 << 20
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")

StopFn = Callable[[], StopReason | None]


@dataclass
class PartJob:
    """One part's download: where it goes, what it must be, and the download call's shared state."""

    part: HubFile
    size: int
    partial: Path
    access: HubAccess
    meter: Meter
    should_stop: StopFn
    retry_delays: Sequence[float] = RETRY_DELAYS_S
    digest: Any = field(default_factory=hashlib.sha256)
    offset: int = 0
    reread_bytes: int = 0  # bytes of an earlier partial read again to continue its hash

    @property
    def name(self) -> str:
        return self.part.path.rsplit("/", 1)[-1]


class TooLong(Exception):
    """The server sent more bytes than the file's listed size."""

    def __init__(self, got: int) -> None:
        super().__init__(got)
        self.got = got


class _Restart(Exception):
    """The server cannot continue from the partial (it answered 416): start the file again."""


def check_stop(job: PartJob) -> None:
    reason = job.should_stop()
    if reason is not None:
        raise DownloadStopped(reason, job.meter.done, job.meter.total)


def rehash_prefix(job: PartJob) -> None:
    """Continue from an existing partial: its bytes are hashed again (hashlib cannot save its state), so the final
    comparison covers the whole file."""
    have = job.partial.stat().st_size if job.partial.exists() else 0
    if have > job.size:
        logger.info("%s: the partial has %d bytes, more than the file's %d; starting again", job.name, have, job.size)
        job.partial.unlink()
        have = 0
    with open(job.partial, "ab") as _:
        pass  # created, so that later opens find it
    with open(job.partial, "rb") as handle:
        while job.offset < have:
            check_stop(job)
            block = handle.read(min(REHASH_BLOCK, have - job.offset))
            if not block:
                break
            job.digest.update(block)
            job.offset += len(block)
            job.meter.add_existing(len(block))  # a 4 GB partial takes seconds to hash: the bar moves meanwhile
            job.meter.report()
    job.reread_bytes += job.offset


def fetch_part(job: PartJob) -> None:
    """Fill ``job.partial`` up to ``job.size`` bytes; HubError on a failure the retries did not cure, OSError when
    the disk refuses the bytes, TooLong when the server sends more than the listed size."""
    import httpx2
    from huggingface_hub.errors import OfflineModeIsEnabled

    failures = 0
    start = job.offset
    with open(job.partial, "ab") as out:
        while job.offset < job.size:
            check_stop(job)
            before = job.offset
            try:
                _stream(job, out)
                if job.offset < job.size:
                    raise _Cut(f"the connection ended after {job.offset} of {job.size} bytes")
                return
            except (DownloadStopped, TooLong):
                raise
            except _Restart:
                _restart(job, out)
                error = bad_answer(job.access, "the server cannot continue the partial download")
            except HubError as caught:
                error = caught
            except OSError as caught:
                if not isinstance(caught, (ConnectionError, TimeoutError)):
                    raise  # the disk, not the network
                error = connection_lost(job.access, job.name, str(caught))
            except (_Cut, httpx2.TransportError, OfflineModeIsEnabled) as caught:
                error = _network_error(caught, job)
                if isinstance(caught, httpx2.ConnectError | httpx2.ConnectTimeout) and job.offset == start:
                    raise error from caught  # not reached at all: say so now (and offer the mirror), no retries
            failures = 0 if job.offset > before else failures + 1
            _wait_before_retry(job, error, max(failures, 1))


class _Cut(Exception):
    pass


def _network_error(error: Exception, job: PartJob) -> HubError:
    """A cut connection (the body ended early, a reset) or what hub_error makes of the rest; other errors (not the
    network's) are re-raised."""
    import httpx2

    if isinstance(error, _Cut | httpx2.RemoteProtocolError | httpx2.ReadError):
        return connection_lost(job.access, job.name, str(error) or type(error).__name__)
    return hub_error(error, job.access, job.name)


def _wait_before_retry(job: PartJob, error: HubError, failures: int) -> None:
    """Sleep before the next try (Retry-After for a short 429), watching for pause/cancel; raise ``error`` when no
    try is left or it is not one that a retry cures."""
    if error.kind is HubFault.RATE_LIMITED:
        retryable = error.retry_after_s is not None and error.retry_after_s <= MAX_RETRY_AFTER_S
    else:
        retryable = error.kind is HubFault.UNREACHABLE or (error.kind is HubFault.SERVER and (error.status or 0) >= 500)
    if not retryable or failures > len(job.retry_delays):
        raise error
    delay = job.retry_delays[failures - 1]
    if error.retry_after_s is not None:
        delay = max(delay, float(error.retry_after_s))
    logger.info("%s: %s; trying again in %.1f s (try %d)", job.name, error, delay, failures + 1)
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        check_stop(job)
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))


def _restart(job: PartJob, out: BinaryIO) -> None:
    logger.info("%s: the server cannot continue at byte %d; starting the file again", job.name, job.offset)
    out.truncate(0)
    job.meter.rewind(job.offset)
    job.offset = 0
    job.digest = hashlib.sha256()


def _stream(job: PartJob, out: BinaryIO) -> None:
    """One GET from ``job.offset`` (Range), its bytes written, hashed and counted as they arrive."""
    from app.core.hub.http import client, request_headers, timeout

    headers = request_headers(job.access)
    if job.offset:
        headers["Range"] = f"bytes={job.offset}-"
    with client(job.access).stream("GET", job.part.url, headers=headers, timeout=timeout(job.access)) as response:
        _accept(job, response, out)
        for chunk in response.iter_bytes():
            if job.offset + len(chunk) > job.size:
                raise TooLong(job.offset + len(chunk))
            out.write(chunk)
            job.digest.update(chunk)
            job.offset += len(chunk)
            job.meter.received(len(chunk))
            check_stop(job)
        out.flush()


def _accept(job: PartJob, response: Any, out: BinaryIO) -> None:
    """Raise for an error answer; a whole file (200) sent for a Range request starts the partial again."""
    status = response.status_code
    if status == 416:
        response.read()
        raise _Restart()
    if status >= 400:
        response.read()
        raise from_status(job.access, status, response.headers, job.name)
    if job.offset and status == 200:
        logger.info("%s: the server ignored the Range request; downloading the whole file", job.name)
        _restart(job, out)
        return
    if job.offset and status == 206:
        match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
        if match is None or int(match.group(1)) != job.offset:
            raise bad_answer(job.access, f"a part starting elsewhere than byte {job.offset} was sent")
