"""Presenter mode is handed only what it touches (``PresenterParts``), not the window: here it runs on bare
parts — two settings steps, a column, a chat tab with its pane, an empty session and a bridge without a server."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

from app.core.problem import Status
from app.core.session import ModelSession
from app.ui.chat.chat_embed import ChatTab
from app.ui.chat.chat_pane import ChatPane
from app.ui.shell.presenter import CHAT_FONT_SCALE, PresenterMode, PresenterParts
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from tests.ui.conftest import LONG


def test_presenter_mode_works_on_its_parts_alone(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    steps, column, chat = (QWidget(parent), QWidget(parent)), QWidget(parent), ChatTab(parent)
    pane = ChatPane(None, chat)
    chat.set_pane(pane)
    bridge = SupervisorBridge()
    presenter = PresenterMode(PresenterParts(settings_steps=steps, steps_column=column, chat=chat,
                                             session=ModelSession(), bridge=bridge), parent)
    parent.show()
    size = pane.transcript.font().pointSizeF()
    try:
        presenter.set_active(True)
        assert not any(step.isEnabled() for step in steps) and not column.isVisible()
        assert pane.transcript.font().pointSizeF() == pytest.approx(size * CHAT_FONT_SCALE)
        dialog = presenter.dialog
        assert dialog is not None and dialog.parent() is parent
        qtbot.waitUntil(lambda: bool(presenter.checks) and dialog.run_button.isEnabled(), timeout=LONG)
        checks = {check.id: check for check in presenter.checks}
        assert len(checks) == 9 and checks["model"].status is Status.ERROR  # nothing opened in this session
        assert checks["server"].status is Status.ERROR  # the bridge has no server

        presenter.set_active(False)
        assert all(step.isEnabled() for step in steps) and column.isVisible() and not dialog.isVisible()
        assert pane.transcript.font().pointSizeF() == pytest.approx(size) and not presenter.awake
    finally:
        presenter.set_active(False)
        bridge.close()
        bridge.wait_for_actions()
