"""Child process of test_get_model_real_screen.py: on a real X screen (Xvfb + openbox), the window as it opens, then
"Get a model" with a repository's files and pills, in English and Chinese; writes what the test checks as JSON.

    python -m tests.ui.steps.model.get_model_screen_driver --out report.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def _wait(app, condition, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("timed out")
        app.processEvents()
        time.sleep(0.02)


def _settle(app, seconds: float = 0.6) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def _rect(r) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    from app.core.settings import load_settings
    from app.ui import i18n
    from app.ui.shell.main_window import MainWindow
    from tests.hub.fake_hub import FakeHub, FakeRepo
    from tests.hub.repos import tiny_repo_files
    from tests.ui.clipping import clipped

    i18n.preload()
    files = tiny_repo_files(Path(tempfile.mkdtemp()) / "repo")
    report: dict = {}
    with FakeHub() as hub:
        hub.add(FakeRepo("test/tiny-llama-GGUF", dict(files), downloads=5))
        window = MainWindow(load_settings())
        window.show()
        window.start()
        _settle(app, 1.5)
        panel = window.model
        panel.hub_options = {"endpoint": hub.url, "vram_budget": 8 << 30}
        panel.get_model()
        dialog = panel.get_dialog
        assert dialog is not None
        _wait(app, lambda: dialog.machine is not None)
        dialog.search_box.setText("tiny")
        dialog.search()
        _wait(app, lambda: bool(dialog.hits))
        dialog.open_repo("test/tiny-llama-GGUF")
        _wait(app, lambda: dialog.fits is not None)
        screen = dialog.screen()
        report["available"] = _rect(screen.availableGeometry())
        for lang in ("en", "zh"):
            i18n.apply_language(lang)
            _settle(app)
            report[lang] = {"frame": _rect(dialog.frameGeometry()), "clipped": clipped(dialog),
                            "download": dialog.download_button.text(),
                            "pills": sorted({c.verdict.text() for c in dialog.files.cells.values()})}
        i18n.apply_language("en")
        dialog.close()
        window.close()
        _wait(app, lambda: window._close_state == "done")
        window.shutdown_blocking()
    Path(args.out).write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
