"""Downloads from the fake Hub (a real HTTP server on loopback, real GGUF files): verified by the SHA-256 computed
while the bytes arrive, resumed after a cut (in the same call and in the next one), every shard of a split model,
pause and cancel, a copy already on disk not fetched again, and one sentence with nothing half-written left for
every fault."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core.hub.client import list_files
from app.core.hub.download import (
    SPACE_MARGIN,
    DownloadStats,
    already_have,
    download_model,
    model_dir,
    partial_path,
)
from app.core.hub.download_progress import DownloadProgress, DownloadStopped, StopReason
from app.core.hub.errors import HubError, HubFault
from app.core.hub.files import HubModel
from app.core.hub.source import HubAccess
from tests.hub import fixtures
from tests.hub.fake_hub import FakeHub, FakeRepo
from tests.hub.fixtures import GATED, TINY, TOKEN
from tests.model_cache import sha256_of

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names
FAST_RETRY = (0.05, 0.05, 0.05)


@pytest.fixture
def models(tmp_path) -> Path:
    """A models folder of its own (tmp_path also holds the app's home in tests)."""
    folder = tmp_path / "models"
    folder.mkdir()
    return folder


def model_named(hub: FakeHub, name: str, repo: str = TINY, token: str | None = None) -> HubModel:
    listing = list_files(repo, HubAccess(endpoint=hub.url, token=token))
    return next(m for m in listing.models if m.name == name)


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def cdn_gets(hub: FakeHub, name: str) -> list:
    return [r for r in hub.requests if r.method == "GET" and r.path.startswith("/cdn/") and r.path.endswith(name)]


def test_download_is_verified_and_renamed_into_place(fake_hub, hub_files, models):
    model = model_named(fake_hub, "tiny-llama-F16.gguf")
    seen: list[DownloadProgress] = []
    stats = DownloadStats()
    path = download_model(model, HubAccess(endpoint=fake_hub.url), folder=models, on_progress=seen.append,
                          stats=stats)
    assert path == models / "test" / "tiny-llama-GGUF" / "tiny-llama-F16.gguf"
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F16.gguf"])
    assert files_under(models) == ["test/tiny-llama-GGUF/tiny-llama-F16.gguf"]  # no .part left
    assert seen[-1].done_bytes == seen[-1].total_bytes == path.stat().st_size
    assert [p.done_bytes for p in seen] == sorted(p.done_bytes for p in seen)
    assert stats.received_bytes == path.stat().st_size and stats.reread_bytes == 0
    assert "of" in seen[-1].sentence().render("en")


def test_a_copy_on_disk_is_recognised_by_hash_and_not_fetched_again(fake_hub, hub_files, models):
    model = model_named(fake_hub, "tiny-llama-F16.gguf")
    access = HubAccess(endpoint=fake_hub.url)
    first = download_model(model, access, folder=models)
    gets = len(cdn_gets(fake_hub, "tiny-llama-F16.gguf"))
    assert already_have(model, models) == first
    assert download_model(model, access, folder=models) == first
    assert len(cdn_gets(fake_hub, "tiny-llama-F16.gguf")) == gets == 1
    elsewhere = hub_files["tiny-llama-F16.gguf"]  # the same file found elsewhere ("On this computer")
    assert already_have(model, models / "empty", elsewhere=[hub_files["tiny-llama-F32.gguf"], elsewhere]) == elsewhere
    assert download_model(model, access, folder=models / "other", elsewhere=[elsewhere]) == elsewhere
    assert len(cdn_gets(fake_hub, "tiny-llama-F16.gguf")) == 1 and not (models / "other").exists()
    first.write_bytes(first.read_bytes()[:-1] + b"\0")  # damaged: no longer the published file
    assert already_have(model, models) is None


def test_every_shard_of_a_split_model(fake_hub, hub_files, models):
    model = model_named(fake_hub, "split/tiny-llama-F16-split.gguf")
    parts = {p.part for p in _progress(model, fake_hub, models)}
    folder = model_dir(model, models)
    assert parts == {1, 2, 3}
    for no in (1, 2, 3):
        name = f"tiny-llama-F16-split-0000{no}-of-00003.gguf"
        assert sha256_of(folder / name) == sha256_of(hub_files[f"split/{name}"])
    assert already_have(model, models) == folder / "tiny-llama-F16-split-00001-of-00003.gguf"


def _progress(model, hub, folder) -> list[DownloadProgress]:
    seen: list[DownloadProgress] = []
    download_model(model, HubAccess(endpoint=hub.url), folder=folder, on_progress=seen.append)
    return seen


def test_a_cut_connection_is_continued_with_a_range_request(fake_hub, hub_files, models):
    model = model_named(fake_hub, "tiny-llama-F32.gguf")
    fake_hub.fault(r"^/cdn/.*F32\.gguf$", cut_after=100_000, times=2)  # two cuts in a row, then it works
    stats = DownloadStats()
    started = time.monotonic()
    path = download_model(model, HubAccess(endpoint=fake_hub.url), folder=models, retry_delays=FAST_RETRY,
                          stats=stats)
    elapsed = time.monotonic() - started
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F32.gguf"])
    ranges = [r.range for r in cdn_gets(fake_hub, "F32.gguf")]
    assert ranges == [None, "bytes=100000-", "bytes=200000-"]
    assert stats.received_bytes == path.stat().st_size and stats.reread_bytes == 0  # nothing fetched twice
    print(f"cut twice + resumed in the same call: {elapsed:.2f} s, {stats.reread_bytes} bytes read again")


def test_after_a_restart_the_next_call_continues_the_kept_partial(fake_hub, hub_files, models):
    model = model_named(fake_hub, "tiny-llama-F32.gguf")
    down = fake_hub.fault(r"^/cdn/.*F32\.gguf$", cut_after=0)  # after the first cut, every try fails at once
    fake_hub.fault(r"^/cdn/.*F32\.gguf$", cut_after=150_000, times=1)
    access = HubAccess(endpoint=fake_hub.url)
    with pytest.raises(HubError) as raised:
        download_model(model, access, folder=models, retry_delays=(0.05,))
    error = raised.value
    assert error.kind is HubFault.UNREACHABLE
    assert "broke while downloading tiny-llama-F32.gguf" in error.message.render("en")
    assert "downloading again continues from there" in str(error.next_step.render("en") if error.next_step else "")
    final = model_dir(model, models) / "tiny-llama-F32.gguf"
    assert not final.exists() and partial_path(final).stat().st_size == 150_000
    fake_hub.faults.remove(down)
    stats = DownloadStats()
    path = download_model(model, access, folder=models, stats=stats)
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F32.gguf"])
    assert stats.reread_bytes == 150_000 and stats.received_bytes == path.stat().st_size - 150_000
    assert cdn_gets(fake_hub, "F32.gguf")[-1].range == "bytes=150000-"
    assert files_under(models) == ["test/tiny-llama-GGUF/tiny-llama-F32.gguf"]


def test_a_partial_that_is_not_the_file_is_refused_and_removed(fake_hub, models):
    """A kept partial from another file (the repository changed): the hash over the whole file catches it."""
    model = model_named(fake_hub, "tiny-llama-F32.gguf")
    final = model_dir(model, models) / "tiny-llama-F32.gguf"
    final.parent.mkdir(parents=True)
    partial_path(final).write_bytes(b"\1" * 50_000)
    with pytest.raises(HubError) as raised:
        download_model(model, HubAccess(endpoint=fake_hub.url), folder=models)
    assert "does not match the SHA-256 the Hub publishes" in raised.value.message.render("en")
    assert files_under(models) == []


def test_a_wrong_published_hash_is_refused_and_nothing_is_left(fake_hub, hub_files, models):
    fake_hub.add(FakeRepo("test/wrong-hash-GGUF", {"tiny-llama-F16.gguf": hub_files["tiny-llama-F16.gguf"]},
                          hashes={"tiny-llama-F16.gguf": "ab" * 32}))
    model = model_named(fake_hub, "tiny-llama-F16.gguf", repo="test/wrong-hash-GGUF")
    with pytest.raises(HubError) as raised:
        download_model(model, HubAccess(endpoint=fake_hub.url), folder=models)
    assert raised.value.kind is HubFault.BAD_ANSWER
    text = raised.value.message.render("en")
    assert text.startswith("tiny-llama-F16.gguf does not match the SHA-256 the Hub publishes for it (expected ")
    assert text.endswith("so it was not kept; the partial download was removed.")
    assert files_under(models) == [] and not (models / "test").exists()


def test_no_disk_space_is_one_sentence_before_anything_is_fetched(fake_hub, models):
    """The free-space reading is injected (a tiny disk); the real small filesystem is in tests/unit/cli/test_get.py."""
    model = model_named(fake_hub, "tiny-llama-F16.gguf")
    with pytest.raises(HubError) as raised:
        download_model(model, HubAccess(endpoint=fake_hub.url), folder=models, free=lambda p: 10_000)
    text = raised.value.message.render("en")
    assert text.startswith("Downloading tiny-llama-F16.gguf needs 100.2 MiB free in ")
    assert text.endswith("(233.7 KiB for the model and 100.0 MiB to spare), but only 9.8 KiB is free.")
    assert SPACE_MARGIN == 100 << 20 and not cdn_gets(fake_hub, "F16.gguf")
    assert files_under(models) == []


def test_gated_without_a_token_and_with_a_token_that_did_not_accept(fake_hub, models):
    model = model_named(fake_hub, "tiny-llama-F16.gguf", repo=GATED)
    for token, status in ((None, 401), ("hf_not_accepted", 403)):
        with pytest.raises(HubError) as raised:
            download_model(model, HubAccess(endpoint=fake_hub.url, token=token), folder=models)
        assert raised.value.kind is HubFault.GATED and raised.value.status == status
        assert files_under(models) == []
    path = download_model(model, HubAccess(endpoint=fake_hub.url, token=TOKEN), folder=models)
    assert path.is_file()


def test_a_file_gone_since_the_listing_is_404(fake_hub, models):
    model = model_named(fake_hub, "tiny-llama-F16.gguf")
    del fake_hub.repos[TINY].files["tiny-llama-F16.gguf"]
    with pytest.raises(HubError) as raised:
        download_model(model, HubAccess(endpoint=fake_hub.url), folder=models)
    assert raised.value.kind is HubFault.NOT_FOUND
    assert raised.value.message.render("en") == "tiny-llama-F16.gguf was not found on the Hub (404)."
    assert files_under(models) == []


@pytest.mark.slow  # waits out a real 1 s Retry-After
def test_429_waits_a_short_retry_after_and_refuses_a_long_one(fake_hub, models):
    model = model_named(fake_hub, "tiny-llama-F16.gguf")
    access = HubAccess(endpoint=fake_hub.url)
    fake_hub.fault(r"F16\.gguf$", status=429, retry_after=1, times=1)
    started = time.monotonic()
    assert download_model(model, access, folder=models / "a").is_file()
    assert time.monotonic() - started >= 1.0  # it waited what the Hub asked
    fake_hub.fault(r"F16\.gguf$", status=429, retry_after=3600)
    with pytest.raises(HubError) as raised:
        download_model(model, access, folder=models / "b")
    assert raised.value.kind is HubFault.RATE_LIMITED and raised.value.retry_after_s == 3600
    assert files_under(models / "b") == []


def test_a_mirror_that_does_not_answer_is_one_sentence(fake_hub, models):
    model = model_named(fake_hub, "tiny-llama-F16.gguf")
    fake_hub.fault(r"^/cdn/", delay_s=2.0)
    access = HubAccess(endpoint=fake_hub.url, read_timeout_s=0.3)
    with pytest.raises(HubError) as raised:
        download_model(model, access, folder=models, retry_delays=(0.05,))
    assert raised.value.kind is HubFault.UNREACHABLE
    assert raised.value.message.render("en") == f"{fake_hub.url} did not answer within 0.3 s."
    assert files_under(models) == []


@pytest.mark.slow  # a download throttled to 200 kB/s, 1.2 s
def test_a_slow_mirror_reports_speed_and_time_left(fake_hub, hub_files, models):
    model = model_named(fake_hub, "tiny-llama-F16.gguf")
    fake_hub.fault(r"^/cdn/", bytes_per_s=200_000)
    seen = _progress(model, fake_hub, models)
    timed = [p for p in seen if p.bytes_per_s is not None and p.seconds_left is not None]
    assert timed, "no progress report with a speed"
    assert all(10_000 < p.bytes_per_s < 2_000_000 for p in timed if p.bytes_per_s)
    assert "/s · about " in timed[0].sentence().render("en")


def _stopper(after: int, reason: StopReason):
    state: dict = {"done": 0}

    def on_progress(p: DownloadProgress) -> None:
        state["done"] = p.done_bytes

    def should_stop() -> StopReason | None:
        return reason if state["done"] >= after else None

    return on_progress, should_stop


def test_pause_keeps_the_partial_and_the_next_call_continues(fake_hub, hub_files, models):
    model = model_named(fake_hub, "tiny-llama-F32.gguf")
    fault = fake_hub.fault(r"^/cdn/", bytes_per_s=400_000)
    on_progress, should_stop = _stopper(100_000, StopReason.PAUSE)
    access = HubAccess(endpoint=fake_hub.url)
    with pytest.raises(DownloadStopped) as raised:
        download_model(model, access, folder=models, on_progress=on_progress, should_stop=should_stop)
    assert raised.value.reason is StopReason.PAUSE and raised.value.done_bytes >= 100_000
    final = model_dir(model, models) / "tiny-llama-F32.gguf"
    kept = partial_path(final).stat().st_size
    assert 100_000 <= kept < final_size(hub_files) and not final.exists()
    fake_hub.faults.remove(fault)
    stats = DownloadStats()
    path = download_model(model, access, folder=models, stats=stats)
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F32.gguf"]) and stats.reread_bytes == kept


def final_size(hub_files) -> int:
    return hub_files["tiny-llama-F32.gguf"].stat().st_size


def test_cancel_removes_the_model_files(fake_hub, models):
    model = model_named(fake_hub, "split/tiny-llama-F16-split.gguf")
    fake_hub.fault(r"^/cdn/", bytes_per_s=400_000)
    on_progress, should_stop = _stopper(120_000, StopReason.CANCEL)  # during shard 2, shard 1 done
    with pytest.raises(DownloadStopped) as raised:
        download_model(model, HubAccess(endpoint=fake_hub.url), folder=models, on_progress=on_progress,
                       should_stop=should_stop)
    assert raised.value.reason is StopReason.CANCEL
    assert files_under(models) == [] and not (models / "test").exists()


def test_a_file_without_a_published_hash_is_said_and_checked_by_size(fake_hub, hub_files, models):
    fake_hub.add(FakeRepo("test/no-lfs-GGUF", {"tiny-llama-F16.gguf": hub_files["tiny-llama-F16.gguf"]},
                          lfs_min=1 << 40))  # a plain git file: the Hub publishes no SHA-256 for it
    model = model_named(fake_hub, "tiny-llama-F16.gguf", repo="test/no-lfs-GGUF")
    assert model.parts[0].sha256 is None
    notices = []
    path = download_model(model, HubAccess(endpoint=fake_hub.url), folder=models, on_notice=notices.append)
    assert [n.render("en") for n in notices] == [
        "The Hub publishes no SHA-256 for tiny-llama-F16.gguf, so only its size can be checked after the download."]
    assert path.stat().st_size == hub_files["tiny-llama-F16.gguf"].stat().st_size


def test_a_hub_that_cannot_be_reached_is_said_at_once_with_the_mirror_offered(models):
    import socket

    from app.core.hub.files import HubFile

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/t/x/resolve/main/x-Q4_K_M.gguf"
    model = HubModel("t/x", "x-Q4_K_M.gguf", "Q4_K_M", (HubFile("x-Q4_K_M.gguf", 1000, "ab" * 32, url),))
    started = time.monotonic()
    with pytest.raises(HubError) as raised:
        download_model(model, HubAccess(), folder=models)  # Hugging Face itself: the mirror is the next step
    assert time.monotonic() - started < 5.0  # no retries with backoff (1 + 2 + 4 s) when it was never reached
    assert raised.value.kind is HubFault.UNREACHABLE
    assert raised.value.message.render("en").startswith("Hugging Face could not be reached within 5 s (")
    assert raised.value.next_step is not None and raised.value.next_step.render("en") == (
        "Check the internet connection, or choose the mirror hf-mirror.com as the source.")
    assert files_under(models) == []


def test_a_second_download_of_the_same_model_is_refused_while_the_first_runs(fake_hub, models):
    import threading

    model = model_named(fake_hub, "tiny-llama-F32.gguf")
    fake_hub.fault(r"^/cdn/", bytes_per_s=100_000)
    started, stop = threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    def first() -> None:
        try:
            download_model(model, HubAccess(endpoint=fake_hub.url), folder=models,
                           on_progress=lambda p: started.set(),
                           should_stop=lambda: StopReason.PAUSE if stop.is_set() else None)
        except DownloadStopped as stopped:
            outcome.append(stopped)

    worker = threading.Thread(target=first)
    worker.start()
    try:
        assert started.wait(30)
        with pytest.raises(HubError) as raised:
            download_model(model, HubAccess(endpoint=fake_hub.url), folder=models)
        assert raised.value.message.render("en") == "tiny-llama-F32.gguf is already being downloaded."
    finally:
        stop.set()
        worker.join(30)
    assert not worker.is_alive()  # the first one paused (or finished), undisturbed
    assert all(isinstance(o, DownloadStopped) and o.reason is StopReason.PAUSE for o in outcome)
