"""The GPU engine fetch (issue 28) against a hostile or broken release server, API answer, archive, llama-server
and registry: each answer gets a clear sentence, nothing half-written stays, no process is left running, and a
proxy's password shows nowhere.

The servers are real HTTP servers on 127.0.0.1 (a raw one answering whatever a test says, and the release stand-in
tests/hub/fake_release.py); the archives are built here; the llama-servers are shell scripts. Free disk space is
the one reading given to the code (its ``free`` seam), as a tmpfs cannot be mounted here.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import random
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest

from app.core.hub import archive_unpack
from app.core.hub.archive_unpack import ArchiveRefused, UnsafeArchive, unpack
from app.core.hub.engine_fetch import EngineFetchError, FetchFault, get_gpu_engine, plan_fetch
from app.core.hub.github_release import ListingUnavailable, read_release
from app.core.hub.source import HubAccess
from app.core.launch import device_list, fetched_engines
from app.core.launch.cuda_facts import CardFacts
from app.core.launch.device_list import list_devices
from app.core.launch.release_builds import LINUX_X64, ReleaseSource
from app.core.launch.release_pins import Pin
from tests.hub.fake_release import FakeRelease, linux_cuda_archives, stand_in_server_script, tar_gz, zip_bytes

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in llama-servers are POSIX shell scripts")

CARD = CardFacts("NVIDIA GeForce RTX 3080 Ti", "8.6", "580.82.07", "13.0")
API_PATH = "/repos/ggml-org/llama.cpp/releases/tags/b11434"
SECRET = "s3cret-pa55"
Answer = Callable[[BaseHTTPRequestHandler], None]


class Hostile:
    """A loopback HTTP server whose every GET is answered by ``answer``; ``stop`` ends its drips."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.done = threading.Event()
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):
                pass

            def do_GET(self):
                hostile.answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.done.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile():
    servers: list[Hostile] = []

    def start(answer: Answer) -> Hostile:
        servers.append(Hostile(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def answers(body: bytes, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> Answer:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


def listing_fails(server: Hostile, **kwargs) -> str:
    access = HubAccess(endpoint=server.root, connect_timeout_s=2.0, read_timeout_s=2.0)
    with pytest.raises(ListingUnavailable) as caught:
        read_release(server.root + API_PATH, access, **kwargs)
    return caught.value.why.render("en")


def asset(name: object, size: object = 10, digest: object = "sha256:" + "ab" * 32) -> dict:
    return {"name": name, "size": size, "digest": digest}


# --- the API's answer ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"a":' * 100_000], ids=["array", "object"])
def test_json_nested_deeper_than_python_parses_is_not_a_listing(hostile, body):
    """Before: RecursionError out of plan_fetch (a traceback)."""
    server = hostile(answers(body))
    host = server.root.removeprefix("http://")
    assert listing_fails(server) == f"the answer of {host} is not a release listing: it is not JSON"


@pytest.mark.parametrize("listing, said", [
    ({"assets": [asset("a.zip"), asset("a.zip", digest="sha256:" + "cd" * 32)]}, "the release lists a.zip twice"),
    ({"assets": [asset("a.zip", size=10**30)]}, "the asset a.zip is listed as larger than a release file can be"),
    ({"assets": [asset("a\x1b[31m\n.zip", size=-1)]}, "the asset a\\x1b[31m\\n.zip has no size"),
    ({"assets": {"a.zip": 1}}, "the answer is not a release: it has no list of assets"),
    ({"assets": [asset(["a.zip"])]}, "an asset of the release has no name"),
], ids=["duplicate", "huge", "control-characters", "assets-not-a-list", "name-not-a-string"])
def test_a_listing_of_the_wrong_shape_is_said(hostile, listing, said):
    """Before: a duplicate name kept the last digest silently, a size of 10^30 bytes was planned, a name's control
    characters went into the sentence as they were."""
    server = hostile(answers(json.dumps(listing).encode()))
    assert listing_fails(server).endswith(f"is not a release listing: {said}")


def test_a_digit_bomb_is_not_json_and_names_no_python_setting(hostile):
    server = hostile(answers(b'{"assets": [{"name": "a.zip", "size": ' + b"9" * 5000 + b"}]}"))
    why = listing_fails(server)
    assert why.endswith("is not a release listing: it is not JSON") and "sys." not in why


@pytest.mark.parametrize("location", ["file:///etc/passwd", "http://127.0.0.1:1/elsewhere",
                                      "https://127.0.0.1/upgrade-is-another-address"])
def test_a_redirect_to_another_address_is_not_followed(hostile, location):
    """Before: followed (to another host: its digests would have been trusted; to file://: 'could not be
    reached: Request URL has an unsupported protocol')."""
    server = hostile(answers(b"", 302, (("Location", location),)))
    why = listing_fails(server)
    assert "sent the request on to" in why and "another address, which the app does not read digests from" in why


def test_a_redirect_on_the_same_host_is_followed(hostile):
    listing = json.dumps({"tag_name": "b11434", "assets": [asset("a.zip")]}).encode()

    def answer(handler: BaseHTTPRequestHandler) -> None:
        if handler.path == API_PATH:
            answers(b"", 301, (("Location", "/moved"),))(handler)
        else:
            answers(listing)(handler)

    server = hostile(answer)
    access = HubAccess(endpoint=server.root, connect_timeout_s=2.0, read_timeout_s=2.0)
    assert list(read_release(server.root + API_PATH, access).assets) == ["a.zip"]


def test_a_redirect_loop_ends(hostile):
    server = hostile(answers(b"", 302, (("Location", API_PATH),)))
    assert listing_fails(server).endswith("sent the request on more than 5 times")


def test_a_slow_drip_is_bounded_by_the_whole_answers_deadline(hostile):
    """A byte every 0.2 s never trips the 2 s per-read limit. Before: read until the server stopped (here 60 s)."""
    def drip(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "100000")
        handler.end_headers()
        while not server.done.wait(0.2):
            try:
                handler.wfile.write(b" ")
                handler.wfile.flush()
            except OSError:
                return

    server = hostile(drip)
    started = time.monotonic()
    why = listing_fails(server, deadline_s=1.0)
    assert time.monotonic() - started < 1.0 + 2.0 + 1.5  # the deadline, one read's limit, slack for a loaded machine
    assert why.endswith("did not send its whole answer within 1 s")


def test_a_content_length_that_lies_is_a_broken_answer(hostile):
    server = hostile(lambda handler: (handler.send_response(200), handler.send_header("Content-Length", "100000"),
                                      handler.end_headers(), handler.wfile.write(b'{"assets": []}')))
    assert listing_fails(server).endswith("broke off its answer")  # before: "could not be reached"


def test_a_hostile_listing_refuses_the_plan_with_a_sentence(hostile):
    """plan_fetch as the window and CLI call it: a refusal (NOT_PINNED), never an exception."""
    server = hostile(answers(b"[" * 100_000))
    source = ReleaseSource(server.root + "/download/b11434", "b11434", {}, server.root)
    plan = plan_fetch(CARD, source=source, key=LINUX_X64)
    assert plan.refusal is not None and plan.refusal.kind is FetchFault.NOT_PINNED
    assert "is not a release listing: it is not JSON" in plan.refusal.message.render("en")


# --- the archive -----------------------------------------------------------------------------------------------


def zeros_zip(size: int, name: str = "llama-server") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        with bundle.open(name, "w") as entry:
            for _ in range(size >> 20):
                entry.write(bytes(1 << 20))
    return buffer.getvalue()


def written(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")) if folder.exists() else []


def test_a_zip_bomb_larger_than_the_free_space_writes_nothing(tmp_path):
    """A 32 MiB entry in a ~32 kB zip, with 64 MiB free (a 100 MiB margin is kept). Before: unpacked until the
    disk was full."""
    archive = tmp_path / "bomb.zip"
    archive.write_bytes(zeros_zip(32 << 20))
    assert archive.stat().st_size < 1 << 20
    with pytest.raises(ArchiveRefused) as caught:
        unpack(archive, tmp_path / "out", free=lambda folder: 64 << 20)
    assert caught.value.disk and written(tmp_path / "out") == []
    assert caught.value.why.render("en") == f"it unpacks to 32.0 MiB and the disk of {tmp_path} has 64.0 MiB free"


def test_a_zip_bomb_larger_than_any_build_writes_nothing(tmp_path, monkeypatch):
    """Before: 1 MiB written, then 'damaged or incomplete'."""
    monkeypatch.setattr(archive_unpack, "MAX_UNPACKED_BYTES", 1 << 20)
    archive = tmp_path / "bomb.zip"
    archive.write_bytes(zeros_zip(4 << 20))
    with pytest.raises(ArchiveRefused) as caught:
        unpack(archive, tmp_path / "out", free=lambda folder: 1 << 40)
    assert not caught.value.disk and written(tmp_path / "out") == []
    assert caught.value.why.render("en") == "it would unpack to more than 1.0 MiB, more than a llama.cpp build can be"


def test_a_tar_bomb_is_refused_from_its_first_header(tmp_path):
    """A header that declares 20 GiB (its bytes never come): refused before anything is inflated or written.
    Before: 'damaged or incomplete' after reading to the end."""
    info = tarfile.TarInfo("llama-b11434/llama-server")
    info.size = 20 << 30
    raw = io.BytesIO()
    raw.write(info.tobuf(format=tarfile.GNU_FORMAT) + bytes(1 << 16))
    archive = tmp_path / "bomb.tar.gz"
    import gzip

    archive.write_bytes(gzip.compress(raw.getvalue()))
    with pytest.raises(ArchiveRefused) as caught:
        unpack(archive, tmp_path / "out", free=lambda folder: 1 << 50)
    assert "more than 16.0 GiB" in caught.value.why.render("en") and written(tmp_path / "out") == []


def test_very_many_entries_are_refused_before_any_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(archive_unpack, "MAX_ENTRIES", 50)
    archive = tmp_path / "many.zip"
    archive.write_bytes(zip_bytes({f"f{n}": b"" for n in range(60)}))
    with pytest.raises(ArchiveRefused) as caught:
        unpack(archive, tmp_path / "out", free=lambda folder: 1 << 40)
    assert caught.value.why.render("en") == "it holds more than 50 entries, more than a llama.cpp build has"
    assert written(tmp_path / "out") == []


@pytest.mark.parametrize("name, shown", [
    ("..\\..\\evil.dll", "..\\..\\evil.dll"), ("C:\\evil.dll", "C:\\evil.dll"), ("C:evil.dll", "C:evil.dll"),
    ("\\\\server\\share\\evil.dll", "\\\\server\\share\\evil.dll"), ("/etc/evil", "/etc/evil"),
    ("llama-server.exe:stream", "llama-server.exe:stream"), ("evil\x1b[2J\r.dll", "evil\\x1b[2J\\r.dll"),
])
def test_windows_absolute_and_odd_names_are_refused_and_said_escaped(tmp_path, name, shown):
    """Before: a colon (an alternate data stream on Windows) and control characters were unpacked."""
    archive = tmp_path / "odd.zip"
    archive.write_bytes(zip_bytes({"llama-server.exe": b"MZ", name: b"MZ"}))
    with pytest.raises(UnsafeArchive) as caught:
        unpack(archive, tmp_path / "out")
    assert caught.value.entry == shown
    assert not (tmp_path / "evil.dll").exists() and not list(tmp_path.parent.glob("evil*"))


def special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info


@pytest.mark.parametrize("entry", [special("llama-b11434/fifo", tarfile.FIFOTYPE),
                                   special("llama-b11434/dev", tarfile.BLKTYPE),
                                   special("llama-b11434/hard", tarfile.LNKTYPE, "/etc/passwd"),
                                   special("llama-b11434/hard", tarfile.LNKTYPE, "llama-b11434/llama-server")],
                         ids=["fifo", "block-device", "hard-link-out", "hard-link-by-path"])
def test_pipes_devices_and_hard_links_by_path_are_refused(tmp_path, entry):
    archive = tmp_path / "special.tar.gz"
    archive.write_bytes(tar_gz({"llama-b11434/llama-server": (b"#!/bin/sh\n", 0o755)}, raw=[entry]))
    with pytest.raises(UnsafeArchive):
        unpack(archive, tmp_path / "out")
    assert not any(path.is_fifo() or path.is_block_device() for path in (tmp_path / "out").rglob("*"))


def test_a_later_archive_never_writes_through_an_earlier_archives_link(tmp_path):
    """The engine tarball links libcudart.so.13 to its launcher; the runtime tarball then holds a file of that name.
    Before: the runtime's bytes were written through the link, over the launcher."""
    out = tmp_path / "out"
    first, second = tmp_path / "engine.tar.gz", tmp_path / "runtime.tar.gz"
    first.write_bytes(tar_gz({"llama-b11434/llama-server": (b"#!/bin/sh\necho launcher\n", 0o755),
                              "llama-b11434/LICENSE": b"MIT"},
                             links={"llama-b11434/libcudart.so.13": "llama-server"}))
    second.write_bytes(tar_gz({"cudart/libcudart.so.13": b"runtime bytes", "cudart/x": b""}))
    unpack(first, out)
    unpack(second, out)
    assert (out / "llama-server").read_bytes() == b"#!/bin/sh\necho launcher\n"
    assert not (out / "libcudart.so.13").is_symlink() and (out / "libcudart.so.13").read_bytes() == b"runtime bytes"


# --- the llama-server in the archive ------------------------------------------------------------------------------

LISTING = "Available devices:\n  CUDA0: NVIDIA GeForce RTX 3080 Ti (11909 MiB, 11650 MiB free)\n"


def marker() -> str:
    """A sleep length no other process uses: ``sleep <marker>`` is found by it afterwards."""
    return f"{random.randint(5000, 9000)}.{random.randint(1000, 9999)}"


def sleepers(mark: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if mark in (process.info.get("cmdline") or []):
            found.append(process)
    return found


def no_sleepers_left(mark: str) -> bool:
    deadline = time.monotonic() + 5.0  # a killed process may take a moment to be reaped on a loaded machine
    while time.monotonic() < deadline:
        left = [process for process in sleepers(mark) if process.status() != psutil.STATUS_ZOMBIE]
        if not left:
            return True
        time.sleep(0.05)
    for process in sleepers(mark):  # do not leave them to the next test
        process.kill()
    return False


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "llama-server"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@posix_only
def test_a_build_that_hangs_is_stopped_at_the_deadline_with_what_it_started(tmp_path):
    """Before: the shell was killed at the deadline, its child kept running (an orphan)."""
    mark = marker()
    launcher = script(tmp_path, f"sleep {mark}\n")
    started = time.monotonic()
    listing = list_devices(launcher, timeout_s=1.0)
    assert time.monotonic() - started < 1.0 + 4.0
    assert listing.devices is None and listing.ended == "timeout"
    assert listing.tail[-1] == f"{launcher} --list-devices did not answer within 1 s"
    assert no_sleepers_left(mark)


@posix_only
def test_a_helper_left_running_is_killed_and_does_not_hold_the_answer(tmp_path):
    """The list is printed, but a helper it started keeps the output pipe open. Before: the run waited for the
    pipe until the deadline (60 s; here 20), then said there was no list, and the helper ran on."""
    mark = marker()
    launcher = script(tmp_path, f"sleep {mark} &\ncat <<'LIST'\n{LISTING}LIST\n")
    started = time.monotonic()
    listing = list_devices(launcher, timeout_s=20.0)
    assert time.monotonic() - started < 10.0
    assert listing.devices is not None and [device.name for device in listing.devices] == ["CUDA0"]
    assert listing.returncode == 0 and listing.ended is None
    assert no_sleepers_left(mark)


@posix_only
def test_output_of_hundreds_of_megabytes_is_not_kept(tmp_path):
    """300 MB of zeros on stdout (no line break), whether it is still writing or has ended when the run looks.
    Before: all of it held in memory (1.1 GB), then parsed; NULs in the evidence."""
    launcher = script(tmp_path, "head -c 300000000 /dev/zero\n")
    listing = list_devices(launcher, timeout_s=20.0)
    assert listing.devices is None and listing.ended == "output"
    assert listing.tail[-1].endswith(f"wrote more than {device_list.MAX_OUTPUT_BYTES} bytes; it was stopped")
    assert sum(map(len, listing.tail)) < 30_000 and not any("\x00" in line for line in listing.tail)


@posix_only
def test_a_stop_asked_for_ends_the_listing(tmp_path):
    mark = marker()
    asked = time.monotonic() + 0.3
    listing = list_devices(script(tmp_path, f"sleep {mark}\n"), timeout_s=30.0,
                           should_stop=lambda: time.monotonic() > asked)
    assert listing.ended == "stopped" and no_sleepers_left(mark)


@pytest.fixture
def release():
    served = FakeRelease().start()
    yield served
    served.stop()


def pinned(release: FakeRelease) -> ReleaseSource:
    pins = {name: Pin(hashlib.sha256(data).hexdigest(), len(data)) for name, data in release.assets.items()}
    return ReleaseSource(release.base_url, release.tag, pins)


def left_behind() -> list[str]:
    root = fetched_engines.engines_folder()
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")
                  if not (path.is_dir() and path.name in ("downloads", "llama.cpp", "b11434"))
                  and path.name != fetched_engines.REGISTRY_NAME)


@posix_only
def test_a_fetched_build_that_hangs_when_asked_for_its_cards_keeps_nothing(release, monkeypatch):
    """Through get_gpu_engine: the sentence says it did not answer; no folder, no entry, no process left."""
    monkeypatch.setattr(device_list, "LIST_TIMEOUT_S", 1.0)
    mark = marker()
    release.assets = linux_cuda_archives(f"#!/bin/sh\nsleep {mark}\n")
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64)
    assert caught.value.kind is FetchFault.CARD_NOT_LISTED
    assert caught.value.message.render("en") == ("The downloaded CUDA 13.4 build did not say within 1 s which "
                                                 "graphics cards it can use, so it was stopped.")
    assert left_behind() == [] and fetched_engines.registered_engines() == []
    assert no_sleepers_left(mark)


# --- the folder the build would go to, and the list of builds ------------------------------------------------------


def write_registry(entries: object) -> Path:
    registry = fetched_engines.engines_folder() / fetched_engines.REGISTRY_NAME
    registry.write_text(json.dumps({"version": 1, "engines": entries}))
    return registry


def engine_entry(folder: Path, launcher: Path, kind: str = "cuda-12") -> dict:
    return {"kind": kind, "label": "CUDA 12.4", "tag": "b11434", "folder": str(folder), "launcher": str(launcher),
            "device": "CUDA0: NVIDIA GeForce RTX 3080 Ti (11909 MiB, 11650 MiB free)", "checked_at": 1.0}


@posix_only
def test_a_registry_entry_pointing_elsewhere_is_never_offered(tmp_path):
    """A program outside the data folder, one that climbs out of its folder, a link out, a number for a path, an
    entry that is not an object: none is offered (so none is run); the good entry still is. Before: the outside
    program was offered first to gpu_servers, a number for a path raised TypeError, one bad entry dropped all."""
    ran = tmp_path / "ran"
    evil = tmp_path / "outside-server"
    evil.write_text(f"#!/bin/sh\ntouch {ran}\n")
    evil.chmod(0o755)
    root = fetched_engines.engines_folder()
    good = root / "llama-b11434-bin-ubuntu-cuda-12.4-x64"
    good.mkdir()
    (good / "llama-server").write_text("#!/bin/sh\n")
    linked = root / "linked"
    linked.mkdir()
    (linked / "llama-server").symlink_to(evil)
    write_registry([engine_entry(tmp_path, evil, "vulkan"), engine_entry(good, good / ".." / ".." / ".." / evil.name),
                    engine_entry(linked, linked / "llama-server"), {**engine_entry(good, good), "launcher": 5},
                    "llama-server", engine_entry(good, good / "llama-server")])
    assert [engine.launcher for engine in fetched_engines.registered_engines()] == [str(good / "llama-server")]
    from app.core.launch import gpu_servers

    assert str(evil) not in map(str, gpu_servers.candidate_files()) and not ran.exists()


@pytest.mark.parametrize("content", [b"[" * 100_000, b"not json", b'{"engines": "abc"}', b'{"engines": {"a": 1}}',
                                     b"\xff\xfe"], ids=["deep", "text", "string", "object", "bytes"])
def test_a_damaged_registry_is_an_empty_list_and_a_get_or_remove_still_works(content):
    (fetched_engines.engines_folder() / fetched_engines.REGISTRY_NAME).write_bytes(content)
    assert fetched_engines.registered_engines() == [] and fetched_engines.remove_engine() == []


def unusable_data_folder(tmp_path: Path, monkeypatch) -> None:
    """The app's home under a file: every folder in it fails to be made (a read-only or vanished data folder;
    the tests run as root here, so permissions cannot refuse)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GGUF_LAUNCHER_HOME", str(blocker / "home"))


def test_a_data_folder_that_cannot_be_made_is_a_sentence_before_any_download(tmp_path, monkeypatch, release):
    """Before: NotADirectoryError out of get_gpu_engine (a traceback in the CLI)."""
    release.assets = {name: b"x" for name in linux_cuda_archives("#!/bin/sh\n")}
    source = pinned(release)
    unusable_data_folder(tmp_path, monkeypatch)
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=source, key=LINUX_X64)
    assert caught.value.kind is FetchFault.DISK
    assert caught.value.message.render("en") == (f"The app's data folder cannot hold a GPU build (Not a directory: "
                                                 f"{tmp_path / 'a-file' / 'home' / 'data'}), so nothing was "
                                                 "downloaded.")
    assert release.downloads_asked() == []
    assert fetched_engines.registered_engines() == [] and fetched_engines.remove_engine() == []


def test_the_cli_lists_and_removes_without_a_traceback_when_the_data_folder_cannot_be_made(tmp_path, monkeypatch,
                                                                                        capsys):
    """gpu_engine.run itself (app.cli.main's own clean-up of child records fails first there: see the report)."""
    from argparse import Namespace

    from app.cli.gpu_engine import run

    unusable_data_folder(tmp_path, monkeypatch)
    assert run(Namespace(action="list", json=True, build=None)) == 0
    assert json.loads(capsys.readouterr().out) == {"engines": []}
    assert run(Namespace(action="remove", json=False, build=None)) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out


@posix_only
@pytest.mark.slow  # a real generation by llama.cpp b11434: ~1-2 s, more on a loaded machine
def test_a_build_that_cannot_be_listed_is_not_kept_and_the_earlier_copy_stays(release, llama_server_bin, tiny_model):
    """The list of builds cannot be written (it is a folder). Before: OSError out of get_gpu_engine, the new folder
    left in place unlisted and the earlier copy of the same build already deleted."""
    listing = LISTING
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, listing))
    root = fetched_engines.engines_folder()
    earlier = root / "llama-b11434-ubuntu-cuda-13.4-x64"
    earlier.mkdir()
    (earlier / "earlier-copy").write_text("kept")
    (root / fetched_engines.REGISTRY_NAME).mkdir()
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64, model=tiny_model)
    assert caught.value.kind is FetchFault.DISK
    assert caught.value.message.render("en").startswith("The checked CUDA 13.4 build could not be added to the list "
                                                        "of downloaded builds (")
    assert sorted(path.name for path in root.iterdir()) == sorted([earlier.name, "downloads",
                                                                   fetched_engines.REGISTRY_NAME])
    assert [path.name for path in earlier.iterdir()] == ["earlier-copy"]


@posix_only
def test_an_engine_folder_renamed_mid_check_is_a_sentence(release, tiny_model):
    """Something (an antivirus program, the user) moves the folder while the build is being checked: a failed
    check with a sentence, nothing listed; the moved folder is not the app's to delete."""
    release.assets = linux_cuda_archives(
        "#!/bin/sh\nhere=$(dirname \"$0\")\nmv \"$here\" \"$here.moved\"\n"
        f"cat <<'LIST'\n{LISTING}LIST\n")
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64, model=tiny_model)
    assert caught.value.kind is FetchFault.GENERATION
    assert caught.value.message.render("en").startswith("The downloaded CUDA 13.4 build could not generate with a "
                                                        "small test model on the NVIDIA GeForce RTX 3080 Ti (the "
                                                        "server could not start: ")
    assert fetched_engines.registered_engines() == []
    assert [path.name for path in fetched_engines.engines_folder().iterdir() if path.name != "downloads"] == [
        "llama-b11434-ubuntu-cuda-13.4-x64.part.moved"]


# --- a proxy's password ------------------------------------------------------------------------------------------


def proxy_refusing(status: int) -> Answer:
    return answers(b"", status, (("Proxy-Authenticate", 'Basic realm="x"'),) if status == 407 else ())


@pytest.mark.parametrize("listing", [True, False], ids=["listing-through-proxy", "download-through-proxy"])
@pytest.mark.parametrize("proxy_status", [407, None], ids=["proxy-answers-407", "proxy-not-listening"])
def test_a_proxy_password_shows_in_no_sentence_json_or_log(hostile, monkeypatch, capsys, caplog, proxy_status,
                                                          listing):
    """plan and get through a proxy with a user and password, as Settings may hold it (listing: the release listing
    is read through it; else the app holds the digests and the archive download goes through it): the CLI's
    --json, its sentences and every log record (DEBUG, every logger, with tracebacks) are searched for them."""
    from argparse import Namespace

    from app.cli import gpu_engine as cli
    from app.core.hardware import gpu as hardware_gpu
    from app.core.hardware.gpu import GpuInfo
    from app.core.hub import engine_fetch

    server = hostile(proxy_refusing(proxy_status or 407))
    proxy_port = server.server.server_address[1]
    if proxy_status is None:
        server.stop()  # nothing listens there any more
    proxy = f"http://gpu-user:{SECRET}@127.0.0.1:{proxy_port}"
    card = GpuInfo(0, CARD.name, None, 12 << 30, 11 << 30, 1 << 30, driver_version="580.82.07",
                   cuda_driver_version="13.0", compute_capability="8.6")
    monkeypatch.setattr(hardware_gpu, "nvidia_gpus", lambda *a, **k: ([card], None))
    monkeypatch.setattr(cli, "_proxy", lambda: proxy)
    release = FakeRelease().start()
    try:
        release.assets = {name: b"x" for name in linux_cuda_archives("#!/bin/sh\n")}
        source = release.source() if listing else pinned(release)
        monkeypatch.setattr(engine_fetch, "official_source", lambda: source)
        caplog.set_level(logging.DEBUG)
        for action in ("plan", "get"):
            code = cli.run(Namespace(action=action, json=True, build=None))
            out = capsys.readouterr()
            assert "Traceback" not in out.err
            assert SECRET not in out.out + out.err and "gpu-user" not in out.out + out.err
        assert code == 1 and release.downloads_asked() == []  # every request went to the proxy
    finally:
        release.stop()
    formatter = logging.Formatter("%(name)s %(message)s")
    logged = [formatter.format(record) for record in caplog.records]
    assert logged and not [line for line in logged if SECRET in line or "gpu-user" in line]


# --- what a hostile listing can put in a sentence, and a bomb through the whole fetch ------------------------------

ENGINE = "llama-b11434-bin-ubuntu-cuda-13.4-x64.tar.gz"


def test_a_look_alike_name_with_control_characters_is_said_escaped(release):
    """The release lacks the archive; a name like it carries a terminal escape. Before: the escape went into the
    refusal's sentence as it was (a terminal would clear the screen)."""
    release.assets = {ENGINE.replace("13.4", "13.5") + "\x1b[2J": b"x", "../../escape.tar.gz": b"x"}
    plan = plan_fetch(CARD, source=release.source(), key=LINUX_X64)
    assert plan.refusal is not None and plan.refusal.kind is FetchFault.NOT_IN_RELEASE
    said = plan.refusal.message.render("en") + "".join(plan.refusal.evidence)
    assert "\x1b" not in said and ENGINE.replace("13.4", "13.5") + "\\x1b[2J" in said
    assert release.downloads_asked() == []


@posix_only
def test_a_bomb_in_a_fetched_build_keeps_nothing_and_says_the_free_space(release, monkeypatch):
    """Through get_gpu_engine, with the disk's free space read as 200 MiB (100 MiB stay free): the 128 MiB entry is
    refused before it is written. Before: unpacked until the disk was full."""
    archives = linux_cuda_archives("#!/bin/sh\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        info = tarfile.TarInfo("llama-b11434/llama-server")
        info.size = 128 << 20
        bundle.addfile(info, io.BytesIO(bytes(info.size)))
    archives[ENGINE] = buffer.getvalue()
    release.assets = archives
    monkeypatch.setattr(archive_unpack, "free_bytes", lambda folder: 200 << 20)
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64)
    assert caught.value.kind is FetchFault.DISK
    assert caught.value.message.render("en") == (f"{ENGINE} was not unpacked: it unpacks to 128.0 MiB and the disk "
                                                 f"of {fetched_engines.engines_folder()} has 200.0 MiB free; nothing "
                                                 "was kept.")
    assert left_behind() == [] and fetched_engines.registered_engines() == []


@posix_only
@pytest.mark.slow  # a real generation by llama.cpp b11434: ~1-2 s, more on a loaded machine
def test_helpers_a_fetched_server_starts_are_gone_after_its_check(release, llama_server_bin, tiny_model):
    """The build's llama-server starts a helper of its own each time it runs (asked for its cards, and serving the
    test model): after the check, kept or not, none runs."""
    mark = marker()
    stand_in = stand_in_server_script(llama_server_bin, LISTING).replace("#!/bin/sh\n",
                                                                         f"#!/bin/sh\nsleep {mark} &\n", 1)
    release.assets = linux_cuda_archives(stand_in)
    engine = get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64, model=tiny_model)
    assert fetched_engines.registered_engines() == [engine]
    assert no_sleepers_left(mark)


@pytest.mark.parametrize("files", [{"llama-server": b"x", "llama-server/inside": b"x", "LICENSE": b""},
                                   {"lib/inside": b"x", "lib": b"x", "LICENSE": b""}],
                         ids=["file-then-folder", "folder-then-file"])
def test_an_entry_where_another_already_is_is_the_archives_fault(tmp_path, files):
    """Before: 'Unpacking ... failed (File exists / Not a directory)' with 'Free some space on that disk' (DISK)."""
    archive = tmp_path / "clash.zip"
    archive.write_bytes(zip_bytes(files))
    with pytest.raises(UnsafeArchive) as caught:
        unpack(archive, tmp_path / "out")
    assert caught.value.why.render("en") == ("a path another entry of the archive already holds (a file where a "
                                             "folder goes, or the reverse)")


@posix_only
def test_a_staging_folder_planted_as_a_link_is_never_written_through(release, tmp_path):
    """A link where the app unpacks (``<build>.part``) pointing elsewhere. Before: rmtree refused the link (errors
    ignored), the archive was unpacked through it into the other folder and left there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (fetched_engines.engines_folder() / "llama-b11434-ubuntu-cuda-13.4-x64.part").symlink_to(elsewhere)
    release.assets = linux_cuda_archives("#!/bin/sh\nexit 3\n")
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64)
    assert caught.value.kind is FetchFault.CARD_NOT_LISTED
    assert list(elsewhere.iterdir()) == [] and left_behind() == []


@posix_only
def test_a_serving_build_that_prints_megabytes_without_a_break_leaves_short_evidence(tmp_path):
    """2 MB of NULs and a terminal escape with no line break, then exit: the check fails with short, printable
    evidence. Before: the 2 MB line, NULs and escape as they were, went into the error's evidence (the CLI prints
    it)."""
    from app.core.server.gpu_generation import generate_on_device

    launcher = script(tmp_path, "printf '\\033[2J'\nhead -c 2000000 /dev/zero\nexit 1\n")
    check = generate_on_device(launcher, "CUDA0", tmp_path / "model.gguf")
    assert check.failure == "the server stopped before it was ready (exit code 1)"
    assert check.tail and all(len(line) <= 4 * 2000 and "\x00" not in line and "\x1b" not in line
                              for line in check.tail)


def test_a_file_after_a_link_of_its_name_in_one_tar_is_not_written_through_it(tmp_path):
    """A link libggml.so -> llama-server, then a file named libggml.so: the link is made after every file, so the
    file's bytes never reach the launcher (held already; kept as a guard)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for info, data in ((tarfile.TarInfo("llama-b11434/llama-server"), b"launcher"),
                           (special("llama-b11434/libggml.so", tarfile.SYMTYPE, "llama-server"), None),
                           (tarfile.TarInfo("llama-b11434/libggml.so"), b"through the link")):
            if data is not None:
                info.size = len(data)
            bundle.addfile(info, io.BytesIO(data) if data is not None else None)
    archive = tmp_path / "order.tar.gz"
    archive.write_bytes(buffer.getvalue())
    unpack(archive, tmp_path / "out")
    assert (tmp_path / "out" / "llama-server").read_bytes() == b"launcher"


def test_a_100_megabyte_answer_is_not_read_past_the_listings_bound(hostile):
    """The server would send 100 MB (its Content-Length says so): reading stops at 8 MiB (held already; guard)."""
    def flood(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(100 << 20))
        handler.end_headers()
        block = b" " * (1 << 20)
        for _ in range(100):
            try:
                handler.wfile.write(block)
            except OSError:
                return

    server = hostile(flood)
    assert listing_fails(server).endswith("is larger than a release listing can be")


@pytest.mark.parametrize("digest", [12345, ["sha256:" + "ab" * 32], "sha256:" + "AB" * 32, "sha256:" + "ab" * 31])
def test_a_digest_that_is_not_a_sha256_string_is_none_published(release, digest):
    """A number, a list, upper-case or short hex: no digest to check against, so nothing is downloaded."""
    release.assets = {name: b"x" for name in linux_cuda_archives("#!/bin/sh\n")}
    release.published[ENGINE] = digest  # type: ignore[assignment]  (a hostile listing's field)
    plan = plan_fetch(CARD, source=release.source(), key=LINUX_X64)
    assert plan.refusal is not None and plan.refusal.kind is FetchFault.NOT_PINNED
    assert plan.refusal.message.render("en").startswith(f"GitHub publishes no SHA-256 for {ENGINE} in llama.cpp's "
                                                        "release b11434")
    assert release.downloads_asked() == []
