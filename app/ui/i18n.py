"""Language switching: core sentences (``app.core.text``) and Qt translations (.qm) move together."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from app.core import text

TRANSLATIONS_DIR = Path(__file__).resolve().parents[2] / "resources" / "translations"
QM_NAME = "gguf_launcher_zh_CN.qm"
LANGUAGES = {"en": "English", "zh": "简体中文"}

_installed: list[QTranslator] = []


def qm_path() -> Path:
    return TRANSLATIONS_DIR / QM_NAME


def resolve_language(saved: str | None) -> str:
    """The saved choice, else what the system (or GGUF_LAUNCHER_LANG) says."""
    return saved if saved in LANGUAGES else text.detect_system_language()


def apply_language(lang: str) -> bool:
    """Switch the whole app; Qt then sends LanguageChange to every widget (they retranslate)."""
    app = QCoreApplication.instance()
    text.set_language(lang)
    for translator in _installed:
        app.removeTranslator(translator)
    _installed.clear()
    if lang != "zh":
        QLocale.setDefault(QLocale(QLocale.Language.English))
        return True
    QLocale.setDefault(QLocale(QLocale.Language.Chinese, QLocale.Country.China))
    ours = QTranslator(app)
    loaded = ours.load(str(qm_path()))
    if loaded:
        app.installTranslator(ours)
        _installed.append(ours)
    qt_own = QTranslator(app)  # Qt's own strings: dialog buttons, context menus
    if qt_own.load("qtbase_zh_CN", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt_own)
        _installed.append(qt_own)
    return loaded
