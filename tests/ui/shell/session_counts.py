"""Counts what the window's model session costs: engine look-ups (a llama-server's or the built-in engine's
inspection) and memory plans, each with the app function that asked for it, per step of the user's path.

Wraps the real functions (nothing is mocked: every call still runs); used by test_session_owner.py and runnable on
any checkout, so the same numbers can be taken before and after a change:

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest tests/ui/shell/test_session_owner.py -q -s -k counts
"""

from __future__ import annotations

import sys
import threading
from collections import Counter

INSPECTIONS = (("app.core.launch.backends", "embedded_backend"), ("app.core.launch.backends", "llama_server_backend"))
PLANS = (("app.core.plan.memory", "make_plan"),)
_COUNTED = ("app/core/launch/backends.py", "app/core/plan/memory.py")


def _asker() -> str:
    """The first app function up the stack outside the counted modules: who asked."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename.replace("\\", "/")
        if "/app/" in path and not path.endswith(_COUNTED):
            return f"{path.split('/app/')[-1]}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


class SessionCounts:
    """``phase`` names the step now measured; ``engines``/``plans`` count (phase, asker) pairs."""

    def __init__(self, monkeypatch) -> None:
        self.phase = "start-up"
        self.engines: Counter[tuple[str, str]] = Counter()
        self.plans: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        for module, name in INSPECTIONS:
            self._wrap(monkeypatch, module, name, self.engines)
        for module, name in PLANS:
            self._wrap(monkeypatch, module, name, self.plans)

    def _wrap(self, monkeypatch, module_name: str, name: str, counter: Counter) -> None:
        module = __import__(module_name, fromlist=[name])
        original = getattr(module, name)

        def counted(*args, **kwargs):
            with self._lock:
                counter[(self.phase, _asker())] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
        for loaded in list(sys.modules.values()):  # modules that imported it by name already
            if loaded is not module and getattr(loaded, name, None) is original:
                monkeypatch.setattr(loaded, name, counted)

    def total(self, counter: Counter, phase: str) -> int:
        return sum(n for (p, _asker), n in counter.items() if p == phase)

    def report(self) -> str:
        lines = []
        for title, counter in (("engine look-ups", self.engines), ("memory plans", self.plans)):
            for (phase, asker), n in sorted(counter.items()):
                lines.append(f"{title:16} {phase:8} {n:3}  {asker}")
        return "\n".join(lines)


def config_holders(window) -> list[str]:
    """Every attribute of the window's objects (its Qt children, the session, the supervisor) that holds a launch
    config: the copies of "the current config" (the Settings widgets are its view and not counted here)."""
    from PySide6.QtCore import QObject

    from app.core.launch.config import LaunchConfig

    objects = {"session": window.session, "supervisor": window.bridge.supervisor}
    for child in window.findChildren(QObject):
        objects.setdefault(type(child).__name__, child)
    found = []
    for name, obj in objects.items():
        for attr, value in vars(obj).items() if obj is not None else ():
            if isinstance(value, LaunchConfig):
                found.append(f"{name}.{attr}")
    return sorted(found)
