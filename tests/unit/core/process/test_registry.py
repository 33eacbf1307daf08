"""The children registry when the app's data folder cannot be made."""

from __future__ import annotations

from app.core.process import registry


def test_no_data_folder_means_no_child_to_stop_and_no_traceback(tmp_path, monkeypatch, caplog):
    """Every command's last step stops the children it registered; with a file where the data folder goes that step
    raised NotADirectoryError out of main() (seen with `gpu-engine remove`)."""
    blocker = tmp_path / "home"
    blocker.write_text("a file where the data folder goes")
    monkeypatch.setenv("GGUF_LAUNCHER_HOME", str(blocker))
    assert registry.stop_own_children() == 0
    assert "the children folder cannot be read" in caplog.text
