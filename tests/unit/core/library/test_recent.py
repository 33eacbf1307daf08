"""The Recent list's names and what became of each file: same-named files told apart by their folder; a missing file
and a damaged one found by reading only the header."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.core.library.recent import DAMAGED, MISSING, OK, check_recent, recent_labels

NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_same_named_files_get_the_folder_that_tells_them_apart():
    paths = [f"/home/ann/.local/share/gguf-launcher/demo/{NAME}", f"/home/ann/Downloads/{NAME}", "/models/tiny.gguf"]
    assert recent_labels(paths) == [f"{NAME} — …/demo", f"{NAME} — …/Downloads", "tiny.gguf"]
    deeper = [f"/a/x/models/{NAME}", f"/b/x/models/{NAME}"]  # the same last folders: as far up as it takes
    assert recent_labels(deeper) == [f"{NAME} — /a/x/models", f"{NAME} — /b/x/models"]


def test_missing_and_damaged_files_are_found(tmp_path, tiny_model):
    good = tmp_path / "a" / NAME
    good.parent.mkdir()
    shutil.copyfile(tiny_model, good)
    data = Path(tiny_model).read_bytes()
    cut = tmp_path / "b" / NAME
    cut.parent.mkdir()
    cut.write_bytes(data[: len(data) // 2])
    gone = tmp_path / "c" / NAME
    found = check_recent([str(good), str(cut), str(gone)])
    assert [entry.state for entry in found] == [OK, DAMAGED, MISSING]
    assert found[0].problem is None and found[2].problem is None
    assert "incomplete" in found[1].problem.render("en")
