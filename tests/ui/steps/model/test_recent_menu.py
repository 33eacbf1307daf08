"""The Recent menu with what a newcomer's list holds after a while: the same file name in two folders (the demo's
copy and a download), a damaged copy and one that was deleted — in both languages."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.ui import i18n, workers
from app.ui.steps.model.model_panel import ModelPanel

NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
LONG = 60_000


def _files(tmp_path: Path, tiny_model) -> list[str]:
    demo, downloads, broken, deleted = (tmp_path / name / NAME for name in ("demo", "Downloads", "broken", "gone"))
    for path in (demo, downloads, broken):
        path.parent.mkdir()
        shutil.copyfile(tiny_model, path)
    data = broken.read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    return [str(demo), str(downloads), str(broken), str(deleted)]


def _checked(panel: ModelPanel) -> bool:
    return len(panel.recent_files) == len(panel.recent)


def test_recent_tells_same_names_apart_marks_damage_and_leaves_out_the_missing(qtbot, tmp_path, tiny_model):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    paths = _files(tmp_path, tiny_model)
    try:
        panel.set_recent(paths)  # at start-up: the files are checked when the menu is first opened
        assert not panel.recent_files and len(panel.recent_menu.actions()) == 4
        panel.recent_menu.aboutToShow.emit()
        qtbot.waitUntil(lambda: _checked(panel), timeout=LONG)
        actions = panel.recent_menu.actions()
        assert [a.text() for a in actions] == [f"{NAME} — …/demo", f"{NAME} — …/Downloads",
                                               f"{NAME} — …/broken (damaged)"]  # the deleted file is left out
        assert [a.toolTip().split("\n")[0] for a in actions] == paths[:3]
        assert "incomplete" in actions[2].toolTip() and panel.recent_menu.toolTipsVisible()
        assert i18n.apply_language("zh")
        panel.retranslate()
        actions = panel.recent_menu.actions()
        assert actions[2].text() == f"{NAME} — …/broken（已损坏）"
        assert "不完整" in actions[2].toolTip()
        actions[2].trigger()  # still opens: its checks say what is wrong
        assert panel.path == paths[2]
        panel.show()  # once the window is up, a new list is checked at once: a file deleted since is left out
        Path(paths[1]).unlink()
        panel.set_recent(paths[::-1])
        qtbot.waitUntil(lambda: [a.toolTip().split("\n")[0] for a in panel.recent_menu.actions()]
                        == [paths[2], paths[0]], timeout=LONG)
    finally:
        i18n.apply_language("en")
        qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=LONG)
