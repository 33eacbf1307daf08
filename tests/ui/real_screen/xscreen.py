"""A real X screen for one test: Xvfb at a given size with openbox managing its windows, and a fresh home.

``x_screen(width, height, folder)`` starts both, yields the environment a child process needs (DISPLAY,
QT_QPA_PLATFORM=xcb, HOME, XDG folders and the app home under ``folder``) and stops both afterwards. Xvfb picks
its own free display number (``-displayfd``), so tests running at once never collide. ``missing()`` names the
programs that are not installed (scripts/setup.sh installs them as root on Debian)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

START_TIMEOUT_S = 30.0
PROGRAMS = ("Xvfb", "openbox")
# where other apps keep models: the app would list them; a fresh user has none
DROPPED = ("OLLAMA_MODELS", "HF_HUB_CACHE", "HF_HOME", "LLAMA_CACHE", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
           "WAYLAND_DISPLAY", "QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS", "QT_FONT_DPI", "GGUF_LAUNCHER_LANG")


def missing() -> list[str]:
    return [name for name in PROGRAMS if shutil.which(name) is None]


def _read_display(fd: int, xvfb: subprocess.Popen, log: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or xvfb.poll() is not None:
            raise RuntimeError(f"Xvfb did not start (exit {xvfb.poll()}): {log.read_text(errors='replace')[-800:]}")
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(fd, 64)
            if not chunk:
                raise RuntimeError(f"Xvfb closed its display pipe: {log.read_text(errors='replace')[-800:]}")
            data += chunk
    return ":" + data.decode().strip()


def _wm_running(env: dict) -> bool:
    """openbox has taken the screen: the root window names its supporting window."""
    if shutil.which("xprop") is None:
        return True  # the driver waits for the window's frame anyway
    done = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True, text=True,
                          check=False, timeout=10)
    return done.returncode == 0 and "window id" in done.stdout


def fresh_env(folder: Path, display: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in DROPPED}
    home = folder / "home"
    for name in ("config", "data", "cache", "runtime"):
        (home / name).mkdir(parents=True, exist_ok=True)
    (home / "runtime").chmod(0o700)
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
               XDG_RUNTIME_DIR=str(home / "runtime"), GGUF_LAUNCHER_HOME=str(folder / "app-home"))
    return env


@contextmanager
def x_screen(width: int, height: int, folder: Path) -> Iterator[dict[str, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "xvfb.log"
    read_end, write_end = os.pipe()
    with open(log, "wb") as log_file:
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", f"{width}x{height}x24",
                                 "-nolisten", "tcp", "-dpi", "96"],
                                pass_fds=(write_end,), stdout=log_file, stderr=subprocess.STDOUT)
    os.close(write_end)
    wm = None
    try:
        display = _read_display(read_end, xvfb, log)
        env = fresh_env(folder, display)
        with open(folder / "openbox.log", "wb") as wm_log:
            wm = subprocess.Popen(["openbox", "--sm-disable"], env=env, stdout=wm_log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _wm_running(env):
            if time.monotonic() > deadline or wm.poll() is not None:
                raise RuntimeError(f"openbox did not start: {(folder / 'openbox.log').read_text(errors='replace')}")
            time.sleep(0.1)
        yield env
    finally:
        os.close(read_end)
        for process in (wm, xvfb):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
