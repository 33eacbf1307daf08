"""Language switching: core sentences (``app.core.text``) and Qt translations (.qm) move together.

The .qm files are read once, at start-up (``preload``), so switching later touches no disk. A read that failed is
not kept: the next switch to Chinese tries that file again, so one transient error does not mean English all run.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QTranslator

from app.core import text

TRANSLATIONS_DIR = Path(__file__).resolve().parents[2] / "resources" / "translations"
QM_NAME = "gguf_launcher_zh_CN.qm"
LANGUAGES = {"en": "English", "zh": "简体中文"}
OURS, QT_OWN = "ours", "qt"  # our Chinese strings; Qt's own (its dialogs' buttons)

log = logging.getLogger(__name__)
_loaded: dict[str, QTranslator] = {}  # the translations read so far, by OURS / QT_OWN; a failed read is not kept
_installed: list[QTranslator] = []


def qm_path() -> Path:
    return TRANSLATIONS_DIR / QM_NAME


def resolve_language(saved: str | None) -> str:
    """The saved choice, else what the system (or GGUF_LAUNCHER_LANG) says."""
    return saved if saved in LANGUAGES else text.detect_system_language()


def startup_language(saved: str | None) -> str:
    """`gguf-launcher --lang zh` (already applied to core by the CLI) wins over the saved choice for this run."""
    explicit = text._language  # set only by set_language(): the CLI flag, or an earlier switch
    return explicit if explicit in LANGUAGES else resolve_language(saved)


def _read(name: str) -> QTranslator | None:
    """One translation file read into a translator owned by the application, or None when it cannot be read."""
    translator = QTranslator()
    if name == OURS:
        ok = translator.load(str(qm_path()))
    else:
        ok = translator.load("qtbase_zh_CN", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath))
    if not ok:
        log.warning("could not read the Chinese translation (%s); it is tried again at the next switch", name)
        return None
    translator.setParent(QCoreApplication.instance())
    return translator


def preload() -> list[QTranslator]:
    """Read the Chinese translations not read yet (call before the event loop runs): those read, ours first."""
    for name in (OURS, QT_OWN):
        if name not in _loaded and (translator := _read(name)) is not None:
            _loaded[name] = translator
    return [_loaded[name] for name in (OURS, QT_OWN) if name in _loaded]


def apply_language(lang: str) -> bool:
    """Switch the whole app; Qt then sends LanguageChange to every widget (they retranslate).

    Returns False when Chinese was asked for but our translation file could not be read.
    """
    text.set_language(lang)
    for translator in _installed:
        QCoreApplication.removeTranslator(translator)
    _installed.clear()
    if lang != "zh":
        QLocale.setDefault(QLocale(QLocale.Language.English))
        return True
    QLocale.setDefault(QLocale(QLocale.Language.Chinese, QLocale.Country.China))
    for translator in preload():
        QCoreApplication.installTranslator(translator)
        _installed.append(translator)
    return OURS in _loaded


class Retranslating:
    """Mixin for a widget whose texts follow the language: Qt's LanguageChange event calls ``retranslate``.

    Put it first among the bases (``class Panel(Retranslating, QWidget)``) so its ``changeEvent`` runs."""

    def retranslate(self) -> None:
        raise NotImplementedError("a Retranslating widget must say how it retranslates")

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)  # type: ignore[misc]  # the Qt base class after this mixin
