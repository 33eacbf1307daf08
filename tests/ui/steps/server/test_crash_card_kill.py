"""The crash card shows a kill the way the diagnosis decided it, through its generic path: "stopped from outside
while memory was fine" with no fix button and the memory readings as evidence, in English and Chinese; an
out-of-memory kill keeps its fix button."""

from __future__ import annotations

import pytest

from app.core.diagnosis import MemorySample, OomEvidence, diagnose
from app.core.launch.config import LaunchConfig
from app.core.text import set_language
from app.ui.steps.server.server_panel import ServerPanel

GIB = 1024**3
MIB = 1024**2
CONFIG = LaunchConfig(model="/models/qwen.gguf", backend="llama-server", ctx=4096)
QUIET = OomEvidence(vmstat_delta=0, cgroup_delta=0, kernel_log_readable=True)


def readings(available_gib: float) -> list[MemorySample]:
    return [MemorySample(1000.0 + i / 2, 297 * MIB, 23 * GIB - int(available_gib * GIB), 23 * GIB) for i in range(4)]


@pytest.fixture
def panel(qtbot):
    widget = ServerPanel()
    qtbot.addWidget(widget)
    return widget


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_kill_with_memory_to_spare_has_no_fix_button_and_shows_the_readings(qtbot, panel, lang):
    diagnosis = diagnose(-9, ["srv  update_slots: all slots are idle"], CONFIG, oom_evidence=QUIET,
                         rss_samples=readings(21.0), was_ready=True)
    assert diagnosis.cause == "killed_from_outside"
    set_language(lang)
    panel.set_state("crashed")
    panel.show_diagnosis(diagnosis)
    card = panel.crash_card
    assert card.problem.message.text() == diagnosis.message.render(lang)
    assert ("内存充足" if lang == "zh" else "while memory was fine") in card.problem.message.text()
    assert card.problem.next_step.text() == diagnosis.next_step.render(lang)
    assert not card.apply_button.isVisibleTo(panel)  # Restart as it was: nothing to apply
    card.problem.evidence_toggle.click()
    shown = card.problem.evidence.toPlainText()
    assert "21.0 GiB available" in shown and "slots" not in shown


def test_an_out_of_memory_kill_keeps_its_fix_button(qtbot, panel):
    diagnosis = diagnose(-9, [], CONFIG, oom_evidence=QUIET, rss_samples=readings(0.5), was_ready=True)
    assert diagnosis.cause == "oom_killed"
    panel.set_state("crashed")
    panel.show_diagnosis(diagnosis)
    assert panel.crash_card.apply_button.isVisibleTo(panel)
    assert panel.crash_card.action() == ("apply", {"ctx": 2048})
