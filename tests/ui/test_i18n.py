"""The retranslation mixin: one changeEvent for every widget whose texts follow the language."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QLabel

import app.ui
from app.ui.i18n import Retranslating


class Counting(Retranslating, QLabel):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def retranslate(self) -> None:
        self.calls += 1


def test_a_language_change_event_calls_retranslate_once(qtbot):
    widget = Counting()
    qtbot.addWidget(widget)
    QCoreApplication.sendEvent(widget, QEvent(QEvent.Type.LanguageChange))
    QCoreApplication.sendEvent(widget, QEvent(QEvent.Type.FontChange))  # other changes pass through untouched
    assert widget.calls == 1


def _all_subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _all_subclasses(sub)
    return found


def test_every_retranslating_widget_in_the_app_says_how():
    for info in pkgutil.walk_packages(app.ui.__path__, prefix="app.ui."):
        importlib.import_module(info.name)
    widgets = {cls for cls in _all_subclasses(Retranslating) if cls.__module__.startswith("app.ui.")}
    assert len(widgets) >= 13
    missing = sorted(cls.__qualname__ for cls in widgets if cls.retranslate is Retranslating.retranslate)
    assert not missing, missing
    for cls in widgets:  # first among the bases, or Qt's own changeEvent would run instead of the mixin's
        assert cls.__mro__.index(Retranslating) < min(i for i, base in enumerate(cls.__mro__)
                                                      if base.__module__.startswith("PySide6")), cls


def test_a_widget_that_forgets_retranslate_fails_loudly(qtbot):
    class Forgetful(Retranslating, QLabel):
        pass

    widget = Forgetful()
    qtbot.addWidget(widget)
    with pytest.raises(NotImplementedError):
        widget.retranslate()


def test_a_failed_read_of_our_translation_is_tried_again_at_the_next_switch(qapp, tmp_path, monkeypatch):
    """A read error at start-up (the file briefly unreadable) is not kept for the whole run: the next switch to
    Chinese reads the file again, and only a failed read of our own file is reported as one."""
    from app.ui import i18n

    readable = i18n.qm_path()
    monkeypatch.setattr(i18n, "_loaded", {})  # this test's own start-up: nothing read yet
    monkeypatch.setattr(i18n, "_installed", [])
    monkeypatch.setattr(i18n, "qm_path", lambda: tmp_path / "not-there-yet.qm")
    try:
        i18n.preload()
        assert not i18n.apply_language("zh")  # Qt's own strings load, ours did not: that is a failure
        assert QCoreApplication.translate("MainWindow", "Machine") == "Machine"
        monkeypatch.setattr(i18n, "qm_path", lambda: readable)  # the file can be read again
        assert i18n.apply_language("en")
        assert i18n.apply_language("zh")
        assert QCoreApplication.translate("MainWindow", "Machine") == "本机"
    finally:
        i18n.apply_language("en")
    assert QCoreApplication.translate("MainWindow", "Machine") == "Machine"
