"""The container note in the Machine step: only inside a container that sees no graphics card, in plain words (no
command line to type), in both languages."""

from __future__ import annotations

from app.core.hardware.notes import build_notes
from tests.unit.core.hardware.test_hardware import _report


def _texts(report, lang: str) -> list[str]:
    return [note.render(lang) for note in build_notes(report)]


def test_inside_a_container_without_a_card_the_note_is_plain():
    report = _report(in_container=True, container_kind="docker")
    english = [text for text in _texts(report, "en") if "container" in text]
    assert english == ["No graphics card is visible, and this app runs inside a container (docker): a container sees "
                       "the computer's graphics card only when it was started with access to it. If this computer "
                       "has one, ask whoever set up the container to start it with graphics card access."]
    chinese = [text for text in _texts(report, "zh") if "容器" in text]
    assert len(chinese) == 1 and chinese[0].startswith("看不到显卡，且本应用运行在容器（docker）中")
    for text in english + chinese:
        assert "--gpus" not in text and "docker run" not in text and "`" not in text


def test_no_container_note_outside_a_container_or_under_wsl():
    for report in (_report(in_container=False), _report(in_container=True, is_wsl=True, wsl_version=2)):
        assert not any("container" in text for text in _texts(report, "en"))
