"""What the window's start-up loads before its first paint (app/ui/shell/main.py, through app/__main__.py).

A real start in a child process, as ``gguf-launcher`` starts it: at the window's first Paint event the child prints
the names of the modules loaded so far (and the Qt classes made, the source files read) and exits. Modules the
window needs only later (the command-line parser, the chat's HTTP stack, the Hub, the planner, the crash decoder,
the GGUF validator) must not be among them: each is start-up time a user waits for (benchmarks/bench_startup.py
measures the whole)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the whole app, started in a child process

ROOT = Path(__file__).resolve().parents[3]

_CHILD = """
import json, os, sys

class _AtFirstPaint:
    # The app's own hook on its window prints "painted" at the first paint (GGUF_LAUNCHER_QUIT_AFTER_PAINT, as the
    # start-up benchmark runs it); the child reports there. A Qt event filter of the child's own on the whole
    # application would be handed Qt-private objects, and PySide would make Qt classes the app never touches.
    def __init__(self, out):
        self.out = out

    def write(self, text):
        if text.strip() == "painted":
            import linecache
            qt_classes = sorted(f"{mod}.{name}" for mod in ("QtCore", "QtGui", "QtWidgets")
                                for name in vars(sys.modules["PySide6." + mod]) if name.startswith("Q"))
            tasks = sys.modules["app.ui.workers"].active_count()
            self.out.write(json.dumps({"modules": sorted(sys.modules), "sources_read": sorted(linecache.cache),
                                       "qt_classes": qt_classes, "tasks": tasks}) + "\\n")
            self.out.flush()
            os._exit(0)
        return self.out.write(text)

    def flush(self):
        self.out.flush()

sys.stdout = _AtFirstPaint(sys.stdout)
from app.__main__ import main
main()
"""

# Loaded only when they are used (the reason, then the module).
LATER = {
    "app.cli": "the command-line parser: the window opens without it",
    "app.core.chat.client": "the chat's HTTP client: with the chat pane, after the first paint",
    "app.ui.chat.chat_pane": "the chat pane: loaded in a worker after the first paint",
    "app.core.hub": "Get a model (the Hub): when the user asks for it",
    "huggingface_hub": "Get a model (the Hub): when the user asks for it",
    "app.core.probe": "Find safe settings: with its first run",
    "app.core.plan.estimate": "the memory plan: with the first model",
    "numpy": "nothing at start-up needs it",
    "gguf": "nothing at start-up needs it (the app reads GGUF files itself)",
    "httpx": "the share proxy's HTTP client: with a share (app/core/server/lan_share.py imports it then)",
    "http.server": "the share proxy's server: with a share",
    "app.core.diagnosis": "the crash decoder: with the first crash or memory reading",
    "app.core.gguf.validate": "the GGUF validator: with the first model (app/core/gguf/__init__.py re-exports nothing)",
    "app.core.demo.fetch": "the demo fetcher: with Try the demo model (app/core/demo/__init__.py re-exports nothing)",
    "app.core.engine.rebuild": "the engine builder: with a rebuild",
    "app.ui.steps.machine.gpu_fetch_box": "Get the GPU engine for this card: built after the hardware scan",
    "app.core.launch.fetched_engines": "the GPU engines the app fetched: read after the hardware scan",
    "app.core.engine.cpu_isa": "the instruction-set probe: with a diagnosis or an engine test (the engine check's "
                               "cache needs only the processor's key)",
    "psutil": "process and memory readings: with the first scan, reading or share (the share box's network "
              "addresses join its list when the list is first used)",
    "app.core.server.watchdog": "the memory watchdog's sentences: with the first memory reading",
    "app.core.hardware": "the hardware readers: with the scan after the first paint",
    "app.core.process.registry": "the stale-server finder: with its look, after the first paint",
    "app.core.plan": "the plan, the experts split and placement sentences: with the first model",
    "app.ui.widgets.plain_tooltips": "the plain-tooltip filter: installed after the first paint",
}

# PySide6 makes a Qt class (and every enum of it, about 0.15 ms each) when Python first touches it: classes the
# window uses only later are touched only later (the class, then where it is touched).
LATER_QT = {
    "QtCore.QUrl": "the diagnostics report's Open folder (app/ui/shell/diagnostics_report.py)",
    "QtWidgets.QMessageBox": "the boxes (the crash notice, the diagnostics report, the model switch)",
    "QtWidgets.QTreeWidget": "the 'On this computer' list, folded at start-up: made with its first look",
}

@pytest.fixture(scope="module")
def first_paint(tmp_path_factory) -> dict:
    """What the child had at the window's first paint: ``modules`` loaded, ``sources_read`` (linecache's files)."""
    env = dict(os.environ, GGUF_LAUNCHER_HOME=str(tmp_path_factory.mktemp("home")), GGUF_LAUNCHER_QUIT_AFTER_PAINT="1",
               QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, f"the window did not paint (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(lines[-1])


def test_no_worker_runs_before_the_first_paint(first_paint: dict) -> None:
    """The hardware scan, the chat pane, the stale-server look and the "On this computer" list start once the
    window has painted: a worker started before competes with that paint for the processor (and the GIL)."""
    assert first_paint["tasks"] == 0


@pytest.fixture(scope="module")
def loaded_at_first_paint(first_paint: dict) -> set[str]:
    return set(first_paint["modules"])


def _loaded(name: str, modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m == name or m.startswith(name + "."))


def test_the_window_itself_is_loaded(loaded_at_first_paint: set[str]) -> None:
    """The check below means something: the child really painted the app's window."""
    assert "app.ui.shell.main_window" in loaded_at_first_paint


@pytest.mark.parametrize("name", sorted(LATER))
def test_loaded_only_when_used(name: str, loaded_at_first_paint: set[str]) -> None:
    assert not _loaded(name, loaded_at_first_paint), f"{name} at start-up: {LATER[name]}"


def test_no_source_file_is_read_before_the_first_paint(first_paint: dict) -> None:
    """PySide6's ``__feature__`` import hook reads the whole source of every module imported after Qt (to look for
    "PySide6" in it); run_gui puts Python's own import back first (app/ui/shell/main.py), as nothing in the app
    uses ``__feature__``. An app module's source in linecache before the first paint is that hook back, or a
    warning or traceback formatted on the way to the window: time a user waits for."""
    assert any(name.startswith("app.ui.steps.") for name in first_paint["modules"])  # the window's modules came
    read = [path for path in first_paint["sources_read"] if path.startswith(str(ROOT / "app"))]
    assert not read, f"{len(read)} of the app's source files read at start-up, e.g. {read[:3]}"


def test_qt_classes_made_first_paint_are_real(first_paint: dict) -> None:
    """The check below means something: classes the window uses are listed as made."""
    assert {"QtCore.Qt", "QtWidgets.QMainWindow", "QtWidgets.QLabel"} <= set(first_paint["qt_classes"])


@pytest.mark.parametrize("name", sorted(LATER_QT))
def test_qt_class_made_only_when_used(name: str, first_paint: dict) -> None:
    assert name not in first_paint["qt_classes"], f"{name} at start-up: {LATER_QT[name]}"


_COLLECTOR_CHILD = """
import gc, os, sys

class _AtFirstPaint:
    def __init__(self, out):
        self.out = out

    def write(self, text):
        if text.strip() == "painted":  # inside the window's first Paint event (the app's own hook)
            from PySide6.QtCore import QTimer
            at_paint = gc.isenabled()

            def after():  # queued behind what the window runs after its first paint, before it closes
                self.out.write(f"{at_paint} {gc.isenabled()}\\n")
                self.out.flush()
                os._exit(0)

            QTimer.singleShot(0, after)
            return len(text)
        return self.out.write(text)

    def flush(self):
        self.out.flush()

sys.stdout = _AtFirstPaint(sys.stdout)
from app.__main__ import main
main()
"""


def test_the_garbage_collector_is_off_until_the_first_paint_then_on(tmp_path) -> None:
    """run_gui pauses Python's cyclic collector while the window loads (about 60 runs that free next to nothing)
    and turns it back on once the window has painted: a long session collects as any Python program does."""
    env = dict(os.environ, GGUF_LAUNCHER_HOME=str(tmp_path), GGUF_LAUNCHER_QUIT_AFTER_PAINT="1",
               QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", _COLLECTOR_CHILD], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, f"the window did not paint (exit {done.returncode}): {done.stderr[-2000:]}"
    assert lines[-1] == "False True"  # off at the first paint; on again right after it


def test_pausing_the_collector_leaves_one_that_was_off_off() -> None:
    """A collector someone else turned off (a debugger, a profiler) stays off when the window's start is done."""
    import gc

    from app.ui.shell.main import pause_collector

    assert gc.isenabled()
    resume = pause_collector()
    assert not gc.isenabled()
    inner = pause_collector()
    inner()
    assert not gc.isenabled()  # the inner pause found it off: it does not turn it on
    resume()
    resume()  # twice is harmless
    assert gc.isenabled()
