"""The curated list of small models and the pick that suits this computer: a 4 GB laptop card, an 8 GB card and a
computer without a usable card each get a model that fits with room for a context."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.hardware.gpu import GpuInfo
from app.core.hub.client import is_repo_id
from app.core.hub.curated import CPU_MAX_BYTES, CURATED, suggested_for, suggested_for_hardware

GB = 1 << 30


def test_every_entry_is_a_repository_id_with_a_note_in_both_languages():
    assert len(CURATED) >= 6 and len({m.repo for m in CURATED}) == len(CURATED)
    for model in CURATED:
        assert is_repo_id(model.repo) and model.repo.endswith("-GGUF"), model.repo
        assert model.note.render("en") and any("\u4e00" <= ch <= "\u9fff" for ch in model.note.render("zh"))


@pytest.mark.parametrize(("vram", "ram", "params", "on_card"), [
    (int(3.8 * GB), 16 * GB, "3B", True),  # a 4 GB laptop card (a little taken by the desktop)
    (int(7.6 * GB), 16 * GB, "8B", True),  # an 8 GB card
    (None, 16 * GB, "2B", False),  # no card: the processor answers fast enough only with a small model
    (None, int(2.5 * GB), "1.5B", False),  # no card, little free RAM
    (int(0.5 * GB), 8 * GB, "2B", False),  # a card too small for any: the processor pick
])
def test_the_pick_fits_this_computer(vram, ram, params, on_card):
    pick = suggested_for(vram, ram)
    assert pick is not None and pick.params == params
    if on_card:
        assert pick.needs_bytes() <= vram
        assert all(m.needs_bytes() > vram for m in CURATED if m.approx_bytes > pick.approx_bytes)  # the largest
    else:
        assert pick.approx_bytes <= CPU_MAX_BYTES and pick.needs_bytes() <= ram


def test_nothing_is_picked_when_nothing_fits():
    assert suggested_for(None, 256 << 20) is None
    assert suggested_for(None, None) is None


def test_the_pick_reads_the_largest_free_card_of_a_hardware_report(tiny_hw):
    cards = [GpuInfo(0, "small", None, 4 * GB, int(3.8 * GB), 0), GpuInfo(1, "big", None, 8 * GB, int(7.6 * GB), 0)]
    pick = suggested_for_hardware(replace(tiny_hw, gpus=cards))
    assert pick is not None and pick.params == "8B"


@pytest.fixture
def tiny_hw():
    from app.core.hardware.scan import scan_hardware

    return replace(scan_hardware(), gpus=[])
