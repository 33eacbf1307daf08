"""The Chat tab owns the placeholder/pane swap: typed (``pane`` is None until the chat pane is loaded), and what the
window asks of the chat (streaming? shut down, memory short) is answered whichever is shown."""

from __future__ import annotations

import shiboken6

from app.ui.chat.chat_embed import ChatPlaceholder, ChatTab
from app.ui.chat.chat_pane import ChatPane
from app.ui.i18n import apply_language
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from tests.ui.conftest import LONG


def test_the_tab_shows_the_placeholder_until_the_pane_is_loaded_then_the_pane(qtbot):
    tab = ChatTab()
    qtbot.addWidget(tab)
    placeholder = tab.shown()
    assert tab.pane is None and isinstance(placeholder, ChatPlaceholder) and placeholder.text() == "Loading the chat…"
    assert not tab.is_streaming()
    tab.set_memory_short(True)  # nothing to shorten yet, and nothing breaks
    tab.shutdown()

    bridge = SupervisorBridge()
    try:
        with qtbot.waitSignal(tab.paneReady, timeout=LONG) as ready:
            tab.load(bridge)  # the real import, on a worker
        pane = ready.args[0]
        assert isinstance(pane, ChatPane) and tab.pane is pane and tab.shown() is pane and tab.placeholder is None
        assert pane.parent() is tab
        qtbot.waitUntil(lambda: not shiboken6.isValid(placeholder), timeout=5_000)  # the placeholder is deleted
        assert not tab.is_streaming()
        tab.shutdown()
    finally:
        bridge.close()
        bridge.wait_for_actions()


def test_a_chat_that_could_not_load_says_why_and_keeps_saying_it_in_the_other_language(qtbot):
    tab = ChatTab()
    qtbot.addWidget(tab)
    placeholder = tab.shown()
    assert isinstance(placeholder, ChatPlaceholder)
    placeholder.show_failure(ImportError("No module named 'httpx'"))
    assert placeholder.text() == "The chat could not be loaded: No module named 'httpx'"
    try:
        assert apply_language("zh")
        tab.retranslate()  # what the window does after a switch
        assert placeholder.text() == "无法加载对话：No module named 'httpx'"
    finally:
        apply_language("en")
        tab.retranslate()
    assert placeholder.text() == "The chat could not be loaded: No module named 'httpx'"
