"""Fit verdicts read from headers over HTTP range requests: the same numbers as the plan of the same file on disk,
few bytes read, a header longer than the first range grown into, split models merged, gated files one sentence."""

from __future__ import annotations

import pytest

from app.core.gguf.reader import read_model_info, read_raw
from app.core.hardware.scan import scan_hardware
from app.core.hub.client import list_files
from app.core.hub.errors import HubFault
from app.core.hub.fit import FitVerdict, judge
from app.core.hub.ranged import FIRST_RANGE, ReadCount
from app.core.hub.remote import fit_listing, fit_model, remote_model_info
from app.core.hub.source import HubAccess
from tests.hub import fixtures
from tests.hub.fake_hub import FakeHub, FakeRepo
from tests.hub.fixtures import GATED, TINY, TOKEN
from tests.hub.repos import big_vocab_llama, llama31_8b_q4_k_m_like

GiB = 1 << 30

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names


def test_verdicts_equal_the_plan_of_the_same_files_on_disk(fake_hub, hub_files):
    access = HubAccess(endpoint=fake_hub.url)
    listing = list_files(TINY, access)
    hw = scan_hardware()
    fits = {f.name: f for f in fit_listing(listing, access, hw, "llama-server", vram_budget=8 * GiB)}
    local_paths = {"tiny-llama-F32.gguf": hub_files["tiny-llama-F32.gguf"],
                   "tiny-llama-F16.gguf": hub_files["tiny-llama-F16.gguf"],
                   "split/tiny-llama-F16-split.gguf": hub_files["split/tiny-llama-F16-split-00001-of-00003.gguf"]}
    for name, path in local_paths.items():
        local = judge(read_model_info(path), hw, "llama-server", name=name, size=fits[name].size,
                      vram_budget=8 * GiB)
        remote = fits[name]
        assert (remote.verdict, remote.gpu_layers, remote.ctx, remote.max_ctx, remote.devices) == (
            local.verdict, local.gpu_layers, local.ctx, local.max_ctx, local.devices), name
        assert remote.verdict is FitVerdict.FITS_GPU
    assert sum(f.best for f in fits.values()) == 1 and fits["tiny-llama-F32.gguf"].best  # the largest that fits


def test_split_model_merges_every_shard_header(fake_hub, hub_files):
    access = HubAccess(endpoint=fake_hub.url)
    split = next(m for m in list_files(TINY, access).models if m.is_split)
    count = ReadCount()
    info = remote_model_info(split, access, count)
    local = read_model_info(hub_files["split/tiny-llama-F16-split-00001-of-00003.gguf"])
    assert info.layer_bytes == local.layer_bytes and info.tensor_data_bytes == local.tensor_data_bytes
    assert info.total_file_size == local.total_file_size and len(info.shard_paths) == 3
    assert count.requests == 3


def test_gated_file_is_one_sentence_and_a_token_opens_it(fake_hub):
    access = HubAccess(endpoint=fake_hub.url)
    model = list_files(GATED, access).models[0]  # the listing itself is public, as on the Hub
    fit = fit_model(model, access, scan_hardware(), "llama-server")
    assert fit.verdict is FitVerdict.UNKNOWN and fit.problem is not None
    assert getattr(fit.problem, "kind", None) is HubFault.GATED
    assert str(fit.sentence()).startswith(f"{model.name} is gated or private")
    opened = fit_model(model, HubAccess(endpoint=fake_hub.url, token=TOKEN), scan_hardware(), "llama-server")
    assert opened.verdict is not FitVerdict.UNKNOWN


def test_a_header_longer_than_the_first_range_is_grown_into(tmp_path):
    path = big_vocab_llama(tmp_path, n_extra_tokens=50_000)
    header = read_raw(path).data_offset
    assert FIRST_RANGE // 2 < header < FIRST_RANGE < path.stat().st_size
    with FakeHub() as hub:
        hub.add(FakeRepo("t/big", {path.name: path}))
        access = HubAccess(endpoint=hub.url)
        model = list_files("t/big", access).models[0]
        count = ReadCount()
        info = remote_model_info(model, access, count)
        assert count.requests == 2 and count.bytes < 2 * FIRST_RANGE + header  # the reader's 1 MiB window
        assert info.vocab_size == read_model_info(path).vocab_size and info.data_offset == header
        assert hub.body_bytes[f"t/big/{path.name}"] == count.bytes < path.stat().st_size


def test_a_server_that_ignores_range_is_read_only_as_far_as_needed(tmp_path, fake_hub):
    access = HubAccess(endpoint=fake_hub.url)
    fake_hub.ignore_range = True
    small = next(m for m in list_files(TINY, access).models if m.name == "tiny-llama-F16.gguf")
    assert fit_model(small, access, scan_hardware(), "llama-server").verdict is FitVerdict.CPU_ONLY
    path = big_vocab_llama(tmp_path, n_extra_tokens=50_000)  # its header needs a second range
    fake_hub.add(FakeRepo("t/big", {path.name: path}))
    big = list_files("t/big", access).models[0]
    fit = fit_model(big, access, scan_hardware(), "llama-server")
    assert fit.verdict is FitVerdict.UNKNOWN and fit.problem is not None
    assert "the server sent the whole file instead of the part asked for" in str(fit.sentence())
    assert fit.header_bytes <= FIRST_RANGE


@pytest.mark.slow  # writes a 4.9 GB sparse file's 7 MB header with gguf-py (about 3 s)
def test_a_5_gb_file_is_judged_from_8_mib(tmp_path):
    path = llama31_8b_q4_k_m_like(tmp_path / "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    size, header = path.stat().st_size, read_raw(path).data_offset
    assert size > 4.5e9 and 6e6 < header < 8e6
    with FakeHub() as hub:
        repo = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"
        hub.add(FakeRepo(repo, {path.name: path}, hashes={path.name: "0" * 64}))  # not hashed: never downloaded
        access = HubAccess(endpoint=hub.url)
        model = list_files(repo, access).models[0]
        hw = scan_hardware()
        card = fit_model(model, access, hw, "llama-server", vram_budget=8 * GiB)
        small = fit_model(model, access, hw, "llama-server", vram_budget=4 * GiB)
    assert card.verdict is FitVerdict.FITS_GPU and card.total_layers == 33
    assert small.verdict is FitVerdict.PARTIAL_GPU and 0 < small.gpu_layers < 33
    assert card.header_bytes == 8 << 20 and card.header_requests == 3  # 2 + 2 + 4 MiB for a 7.2 MB header
    assert card.header_bytes < size / 500
