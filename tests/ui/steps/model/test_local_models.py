""""On this computer" in the Model step: other apps' models from a fake home, found off the GUI thread, opened
where they are (double-click or Open) through the panel's usual open path."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.core.problem import Status
from app.core.synthetic.tiny_llama import write_tiny_llama
from app.ui.steps.model.model_panel import ModelPanel
from tests.fakes.local_models import fake_env, make_fake_home
from tests.ui.conftest import LONG


def _panel(qtbot, home, platform="linux") -> ModelPanel:
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.local_models.scan_options = {"env": fake_env(home), "platform": platform}
    return panel


def _rows(local) -> dict[str, object]:
    tree = local.tree
    return {tree.topLevelItem(i).data(0, 256): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())}


def test_list_fills_when_shown_and_opens_on_double_click(qtbot, tmp_path):
    fake = make_fake_home(tmp_path)
    panel = _panel(qtbot, fake["home"])
    local = panel.local_models
    panel.show()
    qtbot.waitUntil(lambda: local.scanned, timeout=LONG)
    assert local.section.toggle.text() == "On this computer (7)"
    rows = _rows(local)
    assert len(rows) == 7
    ollama = rows[str(fake["ollama"])]
    assert ollama.text(0) == "tiny:latest" and ollama.text(3) == "Ollama"
    assert ollama.text(2) == "32-bit, not quantized (F32)"  # the file type in words, not "ALL_F32"
    assert ollama.text(4) == "passed"
    assert rows[str(fake["broken"])].text(4) == "did not pass" and rows[str(fake["broken"])].toolTip(4)
    local.section.set_expanded(True)
    local.tree.itemDoubleClicked.emit(ollama, 0)
    assert panel.path == str(fake["ollama"])  # the blob itself: opened where it is, never copied
    qtbot.waitUntil(lambda: panel.report is not None, timeout=LONG)
    assert panel.report.path == str(fake["ollama"]) and panel.report.usable
    assert not any(c.status is Status.ERROR for c in panel.report.checks)


def test_open_button_follows_the_selection(qtbot, tmp_path):
    fake = make_fake_home(tmp_path)
    panel = _panel(qtbot, fake["home"])
    local = panel.local_models
    local.refresh()
    qtbot.waitUntil(lambda: local.scanned, timeout=LONG)
    assert not local.open_button.isEnabled()
    rows = _rows(local)
    local.tree.setCurrentItem(rows[str(fake["hf"])])
    assert local.open_button.isEnabled()
    with qtbot.waitSignal(local.openRequested, timeout=LONG) as signal:
        qtbot.mouseClick(local.open_button, Qt.MouseButton.LeftButton)
    assert signal.args == [str(fake["hf"])]
    assert panel.path == str(fake["hf"])


def test_nothing_found_is_said_and_a_folder_can_be_added(qtbot, tmp_path):
    panel = _panel(qtbot, tmp_path / "nobody")
    local = panel.local_models
    local.refresh()
    qtbot.waitUntil(lambda: local.scanned, timeout=LONG)
    assert local.tree.topLevelItemCount() == 0 and "No models found" in local.status.text()
    assert "--" not in local.status.text()
    model = write_tiny_llama(tmp_path / "mine" / "a.gguf")
    with qtbot.waitSignal(local.foldersChanged, timeout=LONG) as signal:
        local.add_folder(str(model.parent))
    assert signal.args == [[str(model.parent)]]
    qtbot.waitUntil(lambda: not local.busy() and local.tree.topLevelItemCount() == 1, timeout=LONG)
    assert local.tree.topLevelItem(0).text(3) == "Your folder"


def test_saved_folders_are_searched(qtbot, tmp_path):
    model = write_tiny_llama(tmp_path / "saved" / "b.gguf")
    panel = _panel(qtbot, tmp_path / "nobody")
    local = panel.local_models
    local.set_folders([str(model.parent)])
    local.refresh()
    qtbot.waitUntil(lambda: local.scanned and not local.busy(), timeout=LONG)
    assert list(_rows(local)) == [str(model)]


def test_chinese_after_a_language_switch(qtbot, tmp_path):
    from app.ui.i18n import apply_language

    fake = make_fake_home(tmp_path)
    panel = _panel(qtbot, fake["home"])
    local = panel.local_models
    local.refresh()
    qtbot.waitUntil(lambda: local.scanned, timeout=LONG)
    try:
        assert apply_language("zh")
        local.retranslate()
        assert local.section.toggle.text() == "本机已有的模型（7）"
        assert local.refresh_button.text() == "重新查找" and "不会复制" in local.status.text()
        assert "Hugging Face 缓存" in {local.tree.topLevelItem(i).text(3) for i in range(7)}
    finally:
        apply_language("en")
        local.retranslate()
    assert local.section.toggle.text() == "On this computer (7)"
