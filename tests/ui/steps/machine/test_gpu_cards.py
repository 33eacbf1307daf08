"""The Machine step shows each graphics card as its own row: name, free of total VRAM, driver, who holds memory."""

from __future__ import annotations

import dataclasses

from app.core.hardware.gpu import GpuInfo, GpuProcess
from app.ui.steps.machine.gpu_cards import GpuCards
from app.ui.steps.machine.machine_panel import MachinePanel
from tests.unit.core.plan.test_gpu_split import two_gpu_report

GiB = 1024**3


def test_two_cards_are_two_rows_with_their_own_numbers(qtbot):
    report = two_gpu_report(free_gib=(8, 12))
    report.gpus[1] = dataclasses.replace(report.gpus[1], vram_free_bytes=10 * GiB, vram_used_bytes=2 * GiB,
                                         other_processes=[GpuProcess(4242, "Xorg", 300 << 20)])
    panel = MachinePanel(live=False)
    qtbot.addWidget(panel)
    panel._on_scanned(report)
    panel.show()
    rows = panel.gpu_box.rows
    assert len(rows) == 2 and all(bar.isVisible() for _name, bar, _detail in rows)
    assert [name.text() for name, _bar, _detail in rows] == ["GPU 0: NVIDIA GeForce RTX 3060 Ti",
                                                              "GPU 1: NVIDIA GeForce RTX 3060"]
    assert "8.0 GiB free of 8.0 GiB" in rows[0][1].text() and "10.0 GiB free of 12.0 GiB" in rows[1][1].text()
    assert rows[1][1].used == 2 * GiB and "Xorg (300.0 MiB)" in rows[1][2].text()
    assert "Xorg" not in rows[0][2].text()


def test_rows_follow_the_live_reading_and_a_card_that_goes_away(qtbot):
    cards = GpuCards()
    qtbot.addWidget(cards)
    report = two_gpu_report()
    cards.show_gpus(report.gpus, report, set())
    cards.show()
    cards.show_gpus(report.gpus[:1], report, set())
    (name0, bar0, _), (name1, bar1, detail1) = cards.rows
    assert bar0.isVisible() and not bar1.isVisible() and not name1.isVisible() and not detail1.isVisible()


def test_no_card_is_one_kind_sentence_and_own_server_is_named(qtbot):
    cards = GpuCards()
    qtbot.addWidget(cards)
    report = dataclasses.replace(two_gpu_report(), gpus=[], other_gpus=["Intel UHD 630"])
    cards.show_gpus([], report, set())
    assert "No NVIDIA GPU found" in cards.rows[0][0].text() and "Intel UHD 630" in cards.rows[0][0].text()
    gpu = GpuInfo(0, "NVIDIA GeForce RTX 3060", "GPU-1", 12 * GiB, 9 * GiB, 3 * GiB,
                  [GpuProcess(777, "llama-server", 2 * GiB)])
    cards.show_gpus([gpu], report, {777})
    assert "this app's server (2.0 GiB)" in cards.rows[0][2].text()
