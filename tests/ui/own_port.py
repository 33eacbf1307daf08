"""A window test's server on a port of its own, not the default 8080.

Every window starts its server on 8080 unless told otherwise. The app moves a first start off a busy port, but a
restart (Recover, the restart after a rebuild) keeps the port its clients know: when another test process on the
same machine (parallel runs, other work) took 8080 while this test's server was down, that restart failed with
"port in use" and the test waited out its whole deadline for Ready (seen: two test processes at once, one of them
failed with port_in_use on its rebuild's restart; a first start of both at once hung the same way)."""

from __future__ import annotations

from app.core.launch.ports import find_free_port
from tests.ui.conftest import LONG


def use_a_port_of_its_own(qtbot, window) -> int:
    """Set the Settings step's port to one the OS says is free now (after the model's plan: the form is filled)."""
    port = find_free_port()
    window.settings_panel.advanced.port.setValue(port)
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.port == port, timeout=LONG)
    return port


def save_a_port_of_its_own(window, model) -> int:
    """For a model the test opens later, while a server runs (the model switch restarts on that model's settings):
    its saved settings name a port the OS says is free now."""
    port = find_free_port()
    saved = window.store.settings.profile(model).get("launch_config") or {}
    window.store.settings.update_profile(str(model), launch_config={**saved, "port": port})
    return port
