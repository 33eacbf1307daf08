"""The attempts list: a re-check of a passing setting says so instead of looking like the same row twice."""

from __future__ import annotations

from app.core.probe import Attempt
from app.ui.steps.settings.probe_box import ProbeBox


def test_a_repeated_setting_is_labelled_as_a_second_try(qtbot):
    box = ProbeBox()
    qtbot.addWidget(box)
    for attempt in (Attempt(0, 4096, ok=True, peak_rss_bytes=1 << 30), Attempt(0, 8192, ok=False, cause="oom_killed"),
                    Attempt(0, 4096, ok=True, peak_rss_bytes=1 << 30)):
        box._add_attempt(attempt)
    rows = [box.attempts.item(i).text() for i in range(box.attempts.count())]
    assert len(rows) == 3 and len(set(rows)) == 3, rows
    assert "again" in rows[2] and "again" not in rows[0]
    box.retranslate()  # a language switch re-renders the rows the same way
    assert box.attempts.item(2).text() == rows[2]
