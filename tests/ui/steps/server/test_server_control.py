"""A crash's fix lands in the Settings step, and the supervisor restarts with exactly the Settings' config."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.core.launch.config import LaunchConfig
from app.core.server.events import State
from app.ui.steps.server.server_control import ServerControl
from tests.ui.steps.server.wiring import SessionSettings


class FakeSupervisor:
    def __init__(self, config: LaunchConfig) -> None:
        self.config, self.state = config, State.FAILED

    def set_config(self, config: LaunchConfig, backend: object = None) -> None:
        self.config = config


class FakeBridge(QObject):
    actionFinished = Signal(str)
    actionFailed = Signal(str, object)

    def __init__(self, supervisor: FakeSupervisor | None) -> None:
        super().__init__()
        self.supervisor, self.calls = supervisor, []

    def restart(self) -> None:
        self.calls.append(("restart", self.supervisor.config))

    def apply_fix_and_restart(self, fix: dict) -> None:
        self.calls.append(("apply_fix", fix))

    def is_busy(self) -> bool:
        return False


def test_a_fix_goes_through_the_settings_and_the_supervisor_restarts_with_that_config(qtbot):
    crashed = LaunchConfig(model="/m/model.gguf", ctx=8192, gpu_layers=35, port=8080, pick_free_port=False)
    settings = SessionSettings(crashed)
    bridge = FakeBridge(FakeSupervisor(crashed.with_changes(port=8080)))
    control = ServerControl(bridge, settings)
    control.apply_fix({"gpu_layers": 28, "port": 0})
    expected = crashed.with_changes(gpu_layers=28, pick_free_port=True)  # port 0 = "any free port", port kept
    assert settings.config() == expected
    assert bridge.calls == [("restart", expected)]  # the supervisor's config is the Settings' one, not its own copy


def test_without_a_model_in_the_settings_the_supervisor_applies_the_fix_itself(qtbot):
    bridge = FakeBridge(FakeSupervisor(LaunchConfig(model="/m/model.gguf")))
    control = ServerControl(bridge, SessionSettings(None))
    control.apply_fix({"ctx": 2048})
    assert bridge.calls == [("apply_fix", {"ctx": 2048})]
