"""The Open dialog starts where the user's models are: the last opened model's folder, else Downloads, else home."""

from __future__ import annotations

import shutil

from PySide6.QtWidgets import QFileDialog

from app.core import paths
from app.ui.steps.model import model_actions as actions


def _dialog_start(monkeypatch, panel) -> str:
    seen = []

    def dialog(_parent, _title, start, _filter):
        seen.append(start)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", dialog)
    panel.choose_file()
    return seen[0]


def test_first_open_starts_in_downloads_then_in_the_last_models_folder(qtbot, window, tiny_model, tmp_path,
                                                                       monkeypatch):
    monkeypatch.setattr("pathlib.Path.home", lambda: tmp_path / "user")
    (tmp_path / "user" / "Downloads").mkdir(parents=True)
    assert _dialog_start(monkeypatch, window.model) == str(tmp_path / "user" / "Downloads")
    folder = tmp_path / "my models"
    folder.mkdir()
    shutil.copyfile(tiny_model, folder / "tiny.gguf")
    window.model.set_recent([str(folder / "tiny.gguf")])
    assert _dialog_start(monkeypatch, window.model) == str(folder)


def test_the_apps_own_folders_and_missing_folders_are_skipped(tmp_path):
    demo = paths.data_dir() / "demo" / "smollm2.gguf"
    gone = tmp_path / "deleted" / "old.gguf"
    assert actions.open_dialog_folder([str(demo), str(gone)], home=tmp_path) == str(tmp_path)  # no Downloads: home
    (tmp_path / "Downloads").mkdir()
    assert actions.open_dialog_folder([], home=tmp_path) == str(tmp_path / "Downloads")
    kept = tmp_path / "kept"
    kept.mkdir()
    assert actions.open_dialog_folder([str(demo), str(kept / "m.gguf")], home=tmp_path) == str(kept)
