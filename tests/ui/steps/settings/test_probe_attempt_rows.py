"""The attempts list: a re-check of a passing setting says so instead of looking like the same row twice."""

from __future__ import annotations

from app.core.probe import Attempt
from app.core.text import T
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


def test_a_long_row_wraps_in_a_narrow_column_instead_of_scrolling_sideways(qtbot):
    box = ProbeBox()
    qtbot.addWidget(box)
    box.resize(320, 400)
    box.show()
    qtbot.waitExposed(box)
    reason = T("the server ran out of memory while it loaded the model, so this context is too large for this machine",
               "服务器加载模型时内存不足，所以这个上下文对这台电脑来说太大了")
    box._add_attempt(Attempt(0, 4096, ok=True, peak_rss_bytes=1 << 30))
    box._add_attempt(Attempt(0, 32768, ok=False, reason=reason))
    box._render()
    qtbot.waitUntil(lambda: box.attempts.isVisible())
    qtbot.wait(50)
    view = box.attempts
    assert not view.horizontalScrollBar().isVisible()
    long_row = view.visualItemRect(view.item(1))
    assert long_row.height() >= 2 * view.fontMetrics().height()  # wrapped onto several lines
    assert long_row.right() <= view.viewport().width()
    assert view.height() >= view.visualItemRect(view.item(0)).height() + long_row.height()  # both rows in full


def test_a_passing_row_names_the_full_context_projection_beside_the_measured_peak(qtbot):
    box = ProbeBox()
    qtbot.addWidget(box)
    box._add_attempt(Attempt(0, 13824, ok=True, peak_rss_bytes=int(314.6 * 2**20), full_context_rss_bytes=int(
        398.3 * 2**20), seconds=18.1))
    box._add_attempt(Attempt(0, 512, ok=True, peak_rss_bytes=100 * 2**20, seconds=1.0))  # judged before the projection
    rows = [box.attempts.item(i).text() for i in range(box.attempts.count())]
    assert "peak RAM 314.6 MiB); about 398.3 MiB with a full context" in rows[0], rows
    assert "full context" not in rows[1], rows
