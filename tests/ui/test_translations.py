"""The shipped Chinese translation loads, covers every tr() string in app/ui, and switches live."""

from __future__ import annotations

import importlib.util
import sys

from PySide6.QtCore import QCoreApplication, QTranslator

from app.ui import i18n
from tests.paths import ROOT
from tests.ui.conftest import LONG, open_and_wait


def _script():
    spec = importlib.util.spec_from_file_location("update_translations", ROOT / "scripts" / "update_translations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("update_translations", module)
    spec.loader.exec_module(module)
    return module


def test_qm_loads_and_translates_known_strings(qapp):
    translator = QTranslator()
    assert translator.load(str(i18n.qm_path()))
    assert translator.translate("ProbeBox", "Find safe settings") == "查找安全设置"
    assert translator.translate("MainWindow", "Machine") == "本机"
    assert translator.translate("", "Fits in the memory available.") == "可用内存放得下。"  # module-level tr() helpers


def test_every_tr_string_in_app_ui_is_in_the_ts_and_translated():
    script = _script()
    extracted = script.extracted_pairs()
    assert len(extracted) > 150
    shipped = {}
    for context, source, message in script.contexts(script.TS_FILE):
        translation = message.find("translation")
        text = "".join(translation.itertext()).strip()
        shipped[(context, source)] = "" if translation.get("type") == "unfinished" else text
    missing = sorted(extracted - shipped.keys())
    untranslated = sorted(pair for pair in extracted if not shipped.get(pair))
    assert not missing, f"run scripts/update_translations.py; not in the .ts: {missing}"
    assert not untranslated, f"add these to resources/translations/zh_CN.json: {untranslated}"


def test_the_compiled_qm_matches_the_ts(qapp):
    """Qt finds a translation by (context, source): a stale .qm shows English in places."""
    script = _script()
    translator = QTranslator()
    assert translator.load(str(i18n.qm_path()))
    wrong = []
    for context, source, message in script.contexts(script.TS_FILE):
        if message.get("numerus") == "yes":
            continue
        expected = "".join(message.find("translation").itertext()).strip()
        if translator.translate(context, source) != expected:
            wrong.append((context, source))
    assert not wrong, f"run scripts/update_translations.py to recompile the .qm: {wrong[:10]}"


def test_placeholders_survive_translation():
    import json
    import re

    glossary = json.loads((ROOT / "resources" / "translations" / "zh_CN.json").read_text(encoding="utf-8"))
    for source, text in glossary.items():
        assert set(re.findall(r"\{[^}]*\}", source)) == set(re.findall(r"\{[^}]*\}", text)), source
        assert ("%n" in source) == ("%n" in text), source


def test_language_switch_retranslates_live_including_core_sentences(qtbot, window, tiny_model):
    open_and_wait(qtbot, window, tiny_model)
    window.set_language("zh")
    try:
        assert window.steps[0].title.text().endswith("本机")
        assert window.tabs.tabText(0) == "对话"
        assert window.settings_panel.probe.run_button.text() == "查找安全设置"
        first_check = window.model.checks.rows[0][1].text()
        assert "文件" in first_check  # core Text rendered in Chinese
        assert window.server.start_button.text() == "启动"
        assert window.store.settings.language == "zh"
        qtbot.waitUntil(lambda: window.store.idle, timeout=LONG)
        from app.core.settings import load_settings

        assert load_settings().language == "zh"
    finally:
        window.set_language("en")
    assert window.steps[0].title.text().endswith("Machine")
    assert window.settings_panel.probe.run_button.text() == "Find safe settings"
    assert QCoreApplication.translate("MainWindow", "Machine") == "Machine"


def test_startup_language_saved_choice_then_cli_flag_wins(monkeypatch):
    from app.core import text

    monkeypatch.setattr(text, "_language", None)
    assert i18n.startup_language("zh") == "zh"
    assert i18n.startup_language(None) == "en"  # GGUF_LAUNCHER_LANG=en in tests, like a system locale
    text.set_language("zh")  # what `gguf-launcher --lang zh` does before opening the window
    assert i18n.startup_language("en") == "zh"


def test_no_widget_text_bypasses_translation():
    """Literal English handed straight to a widget would stay English in the Chinese UI."""
    import re

    setter = re.compile(r'(setText|setPlaceholderText|setToolTip|setTitle|setWindowTitle|addItem|addTab|QLabel|'
                        r'QPushButton|setStatusTip|showMessage)\(\s*f?"[A-Za-z]')
    offenders = []
    for path in sorted((ROOT / "app" / "ui").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if setter.search(line) and "tr(" not in line and "translate(" not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
