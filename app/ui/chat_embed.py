"""The Chat tab: F2's chat pane, created and queried through these few calls so the window stays simple."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QWidget


def make_chat_pane(bridge: Any, parent: QWidget) -> QWidget:
    try:
        from app.ui.chat_pane import ChatPane
    except ImportError:  # until the chat pane lands
        return QLabel("chat", parent)
    return ChatPane(bridge, parent)


def is_streaming(chat: Any) -> bool:
    check = getattr(chat, "is_streaming", None)
    return bool(check() if callable(check) else check)


def stop_streaming(chat: Any) -> None:
    stop = getattr(chat, "stop_streaming", None) or getattr(chat, "stop", None)
    if callable(stop):
        stop()
