"""Issue 11, done-when: through the main flows with a real server (first run → model checked → safe settings
measured by a real probe → server ready → a chat answer → the server killed and explained → the Logs tab), in
English and Chinese, every sentence the window shows is free of command-line flags, exception names and Python
class names, and no label or button has its text cut, at 1024×700 and at 1920×1080.

The scan of the source literals (tests/unit/test_no_flags_in_sentences.py) cannot see sentences put together at
run time — a probe's result, a crash diagnosis from a real log, the chat's stats line — this one reads them as shown.
"""

from __future__ import annotations

import os
import re
import signal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui.widgets.job_row import JobState
from tests.ui.clipping import clipped
from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own
from tests.ui.sentences import shown_sentences
from tests.unit.test_no_flags_in_sentences import Sentence, problems

pytestmark = pytest.mark.slow

SERVER = 180_000  # ms: a load or a probe on 2 busy cores
SIZES = [(1024, 700), (1920, 1080)]
CJK = re.compile(r"[\u4e00-\u9fff]")


def _settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(30)


class Reader:
    """Reads the window in each state, language and size; collects what is wrong and how much it read."""

    def __init__(self, qtbot, window) -> None:
        self.qtbot, self.window = qtbot, window
        self.found: list[str] = []
        self.read: dict[str, list[Sentence]] = {}

    def check(self, state: str) -> None:
        window = self.window
        for lang in ("en", "zh"):
            window.set_language(lang)
            for size in SIZES:
                window.resize(*size)
                _settle(self.qtbot)
                self.found += [f"{state} {lang} {size}: cut: {line}" for line in clipped(window)]
            # quoted on purpose: the server's address and the command line to copy (its text and its tool tip)
            sentences = shown_sentences(window, quotes=(window.server.url_value, window.settings_panel.command))
            self.read[f"{state} {lang}"] = sentences
            self.found += [f"{state} {lang}: {line}" for line in problems(sentences)]
        window.set_language("en")
        window.resize(*SIZES[0])
        _settle(self.qtbot)


def _click(qtbot, button) -> None:
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_every_shown_sentence_of_the_main_flows_reads_well(qtbot, window, tiny_model):
    reader = Reader(qtbot, window)
    reader.check("first run")

    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    reader.check("model checked")

    panel = window.settings_panel
    panel.ctx.setValue(512)
    qtbot.waitUntil(lambda: panel.plan is not None and panel.plan.ctx == 512 and panel.wait_idle(), timeout=LONG)
    use_a_port_of_its_own(qtbot, window)  # the restart after the kill keeps the port: another test may take 8080
    _click(qtbot, panel.probe.run_button)
    qtbot.waitUntil(lambda: panel.probe.result is not None or panel.probe.job.state is JobState.FAILED, timeout=SERVER)
    assert panel.probe.result is not None, panel.probe.status.text()
    reader.check("probe done")

    _click(qtbot, window.server.start_button)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    chat = window.chat_tab.pane
    chat.params_box.max_tokens.setValue(8)
    with qtbot.waitSignal(chat.replyFinished, timeout=SERVER):
        assert chat.send("Hello!")
    reader.check("server ready, one answer")

    pid = window.bridge.supervisor.pid
    os.kill(pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: window.server.crash_card.isVisible(), timeout=LONG)
    reader.check("crash explained")

    window.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: window.logs.shown_line_count() > 3, timeout=LONG)
    reader.check("logs")
    window.tabs.setCurrentIndex(0)

    assert not reader.found, "\n".join(reader.found)
    # the scan really read the states: many sentences each, Chinese ones in Chinese, and the run-time ones
    assert all(len(sentences) > 40 for sentences in reader.read.values()), {k: len(v) for k, v in reader.read.items()}
    zh = " ".join(s.text for s in reader.read["crash explained zh"])
    assert len(CJK.findall(zh)) > 200
    crash = " ".join(s.text for s in reader.read["crash explained en"])
    assert window.server.crash_card.problem.message.text() in crash
    transcript = " ".join(s.text for s in reader.read["server ready, one answer en"] if s.where == "chat transcript")
    assert "tokens/s" in transcript and "Hello!" not in transcript  # the stats line is read, the messages are not
    probed = " ".join(s.text for s in reader.read["probe done en"])
    assert "works (loaded in" in probed  # the attempts list's rows


def test_the_reader_sees_a_flag_in_a_shown_label_but_not_in_a_quote(qtbot, window):
    window.server.url_value.setText("http://127.0.0.1:8080 --quoted")
    window.server.uptime_value.setText("Use --ctx-size 512")
    found = problems(shown_sentences(window, quotes=(window.server.url_value,)))
    assert any("--ctx-size" in line for line in found) and not any("--quoted" in line for line in found), found
