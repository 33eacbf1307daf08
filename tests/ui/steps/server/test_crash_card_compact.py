"""Issue 25, item 2: a compact crash card. At the size a 1024×700 screen gives the window (1016×662), in both
languages: the sentence, the fix button and Dismiss are seen whole without scrolling, Start and Send too; the
exit meaning, what the fix changes and the evidence wait behind "Show details"; the card stays short."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from tests.ui.clipping import hidden_part
from tests.ui.conftest import LONG
from tests.ui.shell.test_layout import _crash

SIZE = (1016, 662)  # the first window on a 1024×700 screen with openbox's frame
CARD_MAX = 120  # px: title, a two-line sentence and the buttons (the card was 199 px before)


def _settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(30)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sentence_fix_and_dismiss_are_seen_without_scrolling(qtbot, window, lang):
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)  # Send and Stop are the pane's
    window.resize(*SIZE)
    window.set_language(lang)
    _crash(window)
    _settle(qtbot)
    card = window.server.crash_card
    assert card.apply_button.isVisible() and card.dismiss_button.isVisible()
    assert window.server_scroll.verticalScrollBar().value() == 0
    hidden = [hidden_part(widget) for widget in (card.title, card.problem.message, card.apply_button,
                                                  card.dismiss_button, window.server.start_button,
                                                  window.chat_tab.pane.send_button,
                                                  window.chat_tab.pane.stop_button)]
    assert not [line for line in hidden if line], "\n".join(line for line in hidden if line)
    assert card.height() <= CARD_MAX, card.height()
    window.set_language("en")


def test_details_are_folded_until_asked_for(qtbot, window):
    window.resize(*SIZE)
    _crash(window)
    _settle(qtbot)
    card = window.server.crash_card
    problem = card.problem
    for folded in (problem.detail, problem.next_step, card.fix_changes, problem.evidence):
        assert not folded.isVisible(), folded
    assert problem.details_toggle.isVisible() and problem.details_toggle.text() == "Show details"
    assert card.fix_changes.text().startswith("The fix changes: GPU layers:")
    problem.details_toggle.click()
    _settle(qtbot)
    assert problem.detail.isVisible() and problem.next_step.isVisible() and card.fix_changes.isVisible()
    assert problem.details_toggle.text() == "Hide details"
    assert not problem.evidence.isVisible()  # the evidence lines have their own toggle inside
    problem.evidence_toggle.click()
    _settle(qtbot)
    assert "out of memory" in problem.evidence.toPlainText() and problem.evidence.isVisible()
    problem.details_toggle.click()
    _settle(qtbot)
    assert not problem.details.isVisible()
