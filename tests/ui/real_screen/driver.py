"""Drive the real window through its main states on whatever screen $DISPLAY is, and say where things are.

    QT_QPA_PLATFORM=xcb DISPLAY=:N .venv/bin/python -m tests.ui.real_screen.driver --model SMOLLM2.gguf --out x.json

Run by tests/ui/real_screen/test_real_screen.py in its own Xvfb + openbox, with fresh settings (a temporary home).
The states: first run; ready and chatting (the model answers "What is the capital of France?"); a crash card (a
start on a busy port, with "use any free port" as its fix); presenter mode with the card still open. In each: the
screen's available geometry, the window's frame, where Start, Stop, Send, the chat's Stop, the fix button and
Dismiss are and which part of each can be seen (not cut by the screen, the window or a scroll area), the chat
transcript's visible height, and the widgets whose text is cut (tests/ui/clipping.py) in English and Chinese.
The JSON goes to ``--out``; a failure to reach a state is written there too, with the stage it happened in.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

QUESTION = "What is the capital of France?"
WM_WAIT_S = 20.0  # openbox frames the window well within this, even on a loaded machine
SERVER_WAIT_S = 240.0


def wait_until(app, condition, what: str, timeout_s: float = SERVER_WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        app.processEvents()
        time.sleep(0.02)


def settle(app, seconds: float = 0.5) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def rect_list(rect) -> list[int]:
    return [rect.x(), rect.y(), rect.width(), rect.height()]


def seen_rect(widget):
    """The part of ``widget`` (global coordinates) that its window, scroll areas and parents do not cut off."""
    from tests.ui.clipping import seen_rect as seen_in_window

    return seen_in_window(widget).translated(widget.window().mapToGlobal(widget.window().rect().topLeft()))


def control(widget, window, room) -> dict:
    """Where ``widget`` is and whether all of it can be seen on the screen."""
    from PySide6.QtCore import QPoint, QRect

    if widget is None:
        return {"exists": False, "shown": False, "seen": False}
    full = QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())
    seen = seen_rect(widget)
    shown = widget.isVisibleTo(window) and window.isVisible()
    return {"exists": True, "shown": shown, "enabled": widget.isEnabled(), "rect": rect_list(full),
            "seen_rect": rect_list(seen), "text": widget.text() if hasattr(widget, "text") else "",
            "seen": shown and seen == full and room.contains(full)}


def measure(app, win, state: str) -> dict:
    from PySide6.QtGui import QFontMetrics

    from tests.ui.clipping import clipped

    settle(app)
    screen = win.screen()
    room = screen.availableGeometry()
    chat = win.chat_tab.pane
    card = win.server.crash_card
    controls = {
        "start": win.server.start_button, "server_stop": win.server.stop_button,
        "send": getattr(chat, "send_button", None), "chat_stop": getattr(chat, "stop_button", None),
        "input": getattr(chat, "input", None),
        "fix": card.apply_button if card.isVisibleTo(win) else None,
        "dismiss": card.dismiss_button if card.isVisibleTo(win) else None,
    }
    transcript = getattr(chat, "transcript", None)
    result = {
        "state": state, "screen": rect_list(screen.geometry()), "available": rect_list(room),
        "frame": rect_list(win.frameGeometry()), "geometry": rect_list(win.geometry()),
        "fits": room.contains(win.frameGeometry()), "maximized": win.isMaximized(),
        "controls": {name: control(widget, win, room) for name, widget in controls.items()},
        "transcript_height": seen_rect(transcript).height() if transcript is not None else 0,
        "transcript_line": QFontMetrics(transcript.font()).lineSpacing() if transcript is not None else 0,
        "card_height": card.height() if card.isVisibleTo(win) else 0,
        "server_step_height": win.server_scroll.height(),
        "splitter": win.splitter.sizes(),
        "left_scrolls": win.left_scroll.verticalScrollBar().maximum() > 0,
        "title": win.windowTitle(),
        "transcript_text": transcript.plain_text() if transcript is not None else "",
    }
    cut = {}
    for lang in ("en", "zh"):
        win.set_language(lang)
        settle(app, 0.4)
        cut[lang] = clipped(win)
    win.set_language("en")
    settle(app, 0.2)
    result["clipped"] = cut
    return result


def wait_framed(app, win) -> None:
    """The window manager framed the window (its frame is bigger than the window) and the window settled: the app
    fits it to the screen once more when the window manager may no longer move it (ScreenFit.SETTLE_MS after it was
    shown). Measured before that, a window the manager was still framing stuck out by a pixel (a clean-clone run:
    frame [3, 14, 1242, 755] on a 768-pixel screen, once the chat pane came within a second)."""
    wait_until(app, lambda: win.isVisible() and win.frameGeometry() != win.geometry(), "the window manager's frame",
               WM_WAIT_S)
    wait_until(app, lambda: win.screen_fit.settled, "the window's last fit to the screen", WM_WAIT_S + 5)
    settle(app, 0.5)


def first_run(app, win) -> dict:
    wait_framed(app, win)
    wait_until(app, lambda: win.settings_panel.hardware is not None and win.chat_tab.pane is not None,
               "the hardware scan and the chat pane")
    return measure(app, win, "first-run")


def chatting(app, win, model: str) -> dict:
    win.model.open_model(model)
    wait_until(app, lambda: win.model.report is not None and win.settings_panel.plan is not None
               and win.settings_panel.wait_idle(), "the model's checks and plan")
    win.server.start_button.click()
    wait_until(app, lambda: win.server.state == "ready", "the server to be ready")
    chat = win.chat_tab.pane
    chat.params_box.max_tokens.setValue(24)
    chat.params_box.temperature.setValue(0.0)
    chat.send(QUESTION)
    wait_until(app, lambda: not chat.is_streaming() and chat._reply_entry is not None, "the answer")
    return measure(app, win, "chatting")


def crash_card(app, win) -> tuple[dict, socket.socket]:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    win.server.stop_button.click()
    wait_until(app, lambda: win.server.state == "stopped", "the server to stop")
    win.settings_panel.advanced.port.setValue(busy.getsockname()[1])
    win.settings_panel.advanced.pick_free_port.setCurrentIndex(1)  # "stop with an error" when the port is busy
    win.server.start_button.click()
    wait_until(app, lambda: win.server.crash_card.isVisible() and win.server.crash_card.diagnosis is not None,
               "the crash card")
    return measure(app, win, "crash-card"), busy


def presenter(app, win) -> dict:
    win.presenter.set_active(True)
    settle(app, 1.0)
    if win.presenter.dialog is not None:
        win.presenter.dialog.close()  # the checklist is its own window; what is measured is the main one
    return measure(app, win, "presenter")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a small real chat model (SmolLM2-135M-Instruct Q4_1)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--first-run-only", action="store_true", help="only the first state (no server)")
    args = parser.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    from app.core.settings import load_settings
    from app.ui import i18n, workers
    from app.ui.shell.main_window import MainWindow

    app = QApplication(["gguf-launcher"])
    i18n.apply_language("en")
    win = MainWindow(load_settings())
    win.show()
    win.start_after_first_paint()
    report: dict = {"platform": app.platformName(), "states": [], "error": None}
    stage = "first-run"
    busy = None
    try:
        report["states"].append(first_run(app, win))
        if args.first_run_only:
            return 0
        stage = "chatting"
        report["states"].append(chatting(app, win, args.model))
        stage = "crash-card"
        state, busy = crash_card(app, win)
        report["states"].append(state)
        stage = "presenter"
        report["states"].append(presenter(app, win))
    except Exception:  # noqa: BLE001 - the test reads the stage and the traceback
        report["error"] = f"{stage}: {traceback.format_exc()}"
    finally:
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
        win.close()
        deadline = time.monotonic() + 60
        while win._close_state != "done" and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.02)
        win.shutdown_blocking()
        workers.wait_for_pool()
        if busy is not None:
            busy.close()
    return 0 if report["error"] is None else 1


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    sys.exit(main())
