"""An exception in a slot, in the real app: the app keeps running, the traceback is in the app log, the user gets one
sentence in a non-modal box (once per burst), and the terminal gets no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from app.core.app_log import APP_LOG_NAME

APP_WITH_A_FAILING_SLOT = """
import threading
import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

app = QApplication([])
fired = []


def failing_slot():
    fired.append(1)
    if len(fired) >= 3:
        bad.stop()
    raise RuntimeError("slot failed on purpose")


def failing_thread():
    raise ValueError("thread failed on purpose")


bad = QTimer(interval=20)
bad.timeout.connect(failing_slot)  # a real signal to a slot that raises, three times in a row
worker = threading.Thread(target=failing_thread, name="worker-on-purpose")
deadline = None  # 60 s for the errors to be handled, from when they start: the window's start-up is not in it


def check():
    global deadline
    from app.ui.shell.crash_hook import CrashNotice

    notices = [w.findChild(CrashNotice) for w in app.topLevelWidgets() if w.findChild(CrashNotice) is not None]
    if not notices:
        return
    if deadline is None:
        deadline = time.monotonic() + 60
        bad.start()
        worker.start()
        return
    notice = notices[0]
    if (len(fired) >= 3 and not worker.is_alive() and notice.shown) or time.monotonic() > deadline:
        poll.stop()
        print(f"alive fired={len(fired)} shown={notice.shown} box={notice.box is not None and notice.box.isVisible()}",
              flush=True)
        print("sentence:", notice.box.text() if notice.box is not None else None, flush=True)
        for widget in app.topLevelWidgets():
            widget.close()


poll = QTimer(interval=50, timeout=check)
poll.start()
from app.ui.shell.main import run_gui

raise SystemExit(run_gui())
"""


def test_a_slot_that_raises_is_logged_told_once_and_the_app_goes_on(app_home):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([sys.executable, "-c", APP_WITH_A_FAILING_SLOT], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "alive fired=3 shown=1 box=True" in result.stdout, result.stdout + result.stderr[-2000:]
    assert "Something went wrong inside the app; it was written to the app log." in result.stdout
    assert "Traceback" not in result.stderr and "Error" not in result.stderr
    assert result.stderr.count("Something went wrong inside gguf-launcher") == 1  # one burst, one line
    log = (app_home / "log" / APP_LOG_NAME).read_text(encoding="utf-8")
    assert "RuntimeError: slot failed on purpose" in log and "ValueError: thread failed on purpose" in log
    assert log.count("Traceback (most recent call last)") == 2  # the slot's repeats are counted, not copied
    assert "Uncaught exception in thread worker-on-purpose" in log


def test_the_notice_opens_once_while_open_and_not_over_a_closed_window(qtbot):
    from PySide6.QtWidgets import QWidget

    from app.ui.shell.crash_hook import CrashNotice

    window = QWidget()
    qtbot.addWidget(window)
    notice = CrashNotice(window)
    notice.notify(True)
    qtbot.wait(50)
    assert notice.shown == 0  # a window not on screen gets no box: it would keep a closing app open
    window.show()
    notifier = threading.Thread(target=notice.notify, args=(True,))  # the hook calls it from the failing thread
    notifier.start()
    notifier.join(timeout=30)
    qtbot.waitUntil(lambda: notice.shown == 1)
    assert notice.box is not None and notice.box.isVisible() and not notice.box.isModal()
    assert notice.box.text() == ("Something went wrong inside the app; it was written to the app log. Your work is "
                                 "kept. If it happens again, save a diagnostics report (Help menu).")
    notice.notify(True)
    qtbot.wait(50)
    assert notice.shown == 1  # still open: no second box
    notice.box.close()
    notice.notify(False)
    qtbot.waitUntil(lambda: notice.shown == 2)
    assert "app log" not in notice.box.text()  # nothing could be written: the sentence does not say it was
