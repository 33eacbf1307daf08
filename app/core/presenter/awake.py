"""Keep the screen and the computer awake while presenting, through the desktop's own inhibit API.

- Linux: ``systemd-inhibit --what=idle:sleep … sleep infinity`` as a child held while presenting (logind's idle and
  sleep inhibitor lock, which desktop screen savers honour); released by ending the child.
- macOS: ``caffeinate -d -i -w <our pid>`` (display and idle sleep; it ends by itself if the app dies).
- Windows: ``SetThreadExecutionState(ES_CONTINUOUS | ES_DISPLAY_REQUIRED | ES_SYSTEM_REQUIRED)``.
Where none of these exists, ``start()`` returns False and ``unavailable_reason`` says what to do instead.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys

from app.core.text import T, Text

logger = logging.getLogger(__name__)

_ES_CONTINUOUS, _ES_SYSTEM_REQUIRED, _ES_DISPLAY_REQUIRED = 0x80000000, 0x00000001, 0x00000002
STARTUP_S = 0.5  # an inhibitor that is still running after this holds its lock


def inhibit_command(platform: str = sys.platform, which=shutil.which, pid: int | None = None) -> list[str] | None:
    """The child process that holds the inhibitor on this platform, or None (Windows: an API call; or nothing)."""
    if platform.startswith("linux") and which("systemd-inhibit"):
        return ["systemd-inhibit", "--what=idle:sleep", "--who=GGUF Launcher", "--why=Presenting a local model",
                "--mode=block", "sleep", "infinity"]
    if platform == "darwin" and which("caffeinate"):
        return ["caffeinate", "-d", "-i", "-w", str(pid or os.getpid())]
    return None


NO_SESSION_SERVICE = ("connect to bus", "dbus", "logind")  # systemd-inhibit's words when nobody answers it


def refusal_sentence(reason: str) -> Text:
    """Why the inhibitor could not hold its lock, in plain words (never the system's raw message), and what to do.

    "Failed to connect to bus: No such file or directory" is systemd-inhibit finding no system message bus: no
    desktop session service (logind) answers here, as in a container or without a full desktop."""
    if any(marker in reason.lower() for marker in NO_SESSION_SERVICE):
        return T("This computer could not be kept awake automatically: no desktop session service answers the "
                 "app's request (common in a container or on a computer without a full desktop). "
                 "Turn off screen sleep in the system settings for the talk.",
                 "无法自动让这台电脑保持唤醒：没有桌面会话服务响应应用的请求（在容器中或没有完整桌面的电脑上常见）。"
                 "演讲期间请在系统设置中关闭屏幕休眠。")
    return T("This computer refused to be kept awake automatically (the app's log file has the system's words). "
             "Turn off screen sleep in the system settings for the talk.",
             "这台电脑拒绝了自动保持唤醒的请求（应用的日志文件里记录了系统的原话）。演讲期间请在系统设置中关闭屏幕休眠。")


class ScreenAwake:
    def __init__(self) -> None:
        self._child: subprocess.Popen | None = None
        self._windows = False
        self.unavailable_reason: Text | None = None

    @property
    def active(self) -> bool:
        return self._windows or (self._child is not None and self._child.poll() is None)

    def start(self) -> bool:
        if self.active:
            return True
        if sys.platform == "win32":
            return self._windows_state(_ES_CONTINUOUS | _ES_SYSTEM_REQUIRED | _ES_DISPLAY_REQUIRED)
        command = inhibit_command()
        if command is None:
            self.unavailable_reason = T(
                "This computer offers no way for the app to keep the screen awake; turn off screen sleep in the "
                "system settings for the talk.",
                "这台电脑没有提供让应用保持屏幕常亮的方法；演讲期间请在系统设置中关闭屏幕休眠。")
            return False
        try:
            child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, errors="replace")
            child.wait(timeout=STARTUP_S)  # one that cannot hold the lock (no session bus) ends at once
        except subprocess.TimeoutExpired:
            self._child = child  # still running: it holds the lock
            return True
        except OSError as error:  # it could not even be started
            return self._unavailable(f"{command[0]}: {error}")
        reason = (child.communicate()[1] or "").strip().splitlines()  # it has ended: reads and closes its pipe
        return self._unavailable(reason[-1] if reason else f"exit status {child.returncode}")

    def _unavailable(self, reason: str) -> bool:
        logger.info("screen inhibitor did not start: %s", reason)  # the system's own words stay in the log
        self.unavailable_reason = refusal_sentence(reason)
        return False

    def _windows_state(self, flags: int) -> bool:
        import ctypes

        if sys.platform != "win32":  # kernel32 exists there only
            return False
        ok = bool(ctypes.windll.kernel32.SetThreadExecutionState(flags))
        self._windows = ok and flags != _ES_CONTINUOUS
        return ok

    def stop(self) -> None:
        if self._windows:
            self._windows_state(_ES_CONTINUOUS)
        child, self._child = self._child, None
        if child is None:
            return
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=5)
        if child.stderr is not None:
            child.stderr.close()  # the pipe it could have explained a refusal through goes with it
