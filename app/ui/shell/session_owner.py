"""The window's one owner of the :class:`ModelSession`: it hears the steps and tells them about the model in one
fixed order, so no step depends on which one was connected first.

The order, per model: ``opened(path)`` (the session forgot the last model) → ``checked(CheckedModel)`` (its checks
are in) → ``configured(config | None)`` (the model's settings are in ``session.config``: its profile or first-run
defaults; None when it cannot run) → ``planned(plan | None)`` (``session.plan`` and ``session.backend`` are for
``session.plan_config``) → ``probed(result)`` ("Find safe settings" measured it) → ``started(config)`` (a server
was handed ``session.config``). ``edited(config)`` follows each change in the Settings step (a new ``planned``
follows it).

``configured`` comes after every slot of ``checked`` has returned, and the settings are applied between the two
by the one function the window names (``configure``, the profiles'), not by whichever slot runs first: a step that
needs the config listens to ``configured``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.core.session import CheckedModel, ModelSession

if TYPE_CHECKING:
    from app.ui.steps.model.model_panel import ModelPanel
    from app.ui.steps.server.server_control import ServerControl
    from app.ui.steps.settings.settings_panel import SettingsPanel

Configure = Callable[[CheckedModel], None]  # fills session.config for a checked model (or leaves it None)


class SessionOwner(QObject):
    opened = Signal(str)
    checked = Signal(object)  # CheckedModel
    configured = Signal(object)  # LaunchConfig | None
    edited = Signal(object)  # LaunchConfig
    planned = Signal(object)  # MemoryPlan | None
    probed = Signal(object)  # ProbeResult
    started = Signal(object)  # LaunchConfig

    def __init__(self, session: ModelSession, model_panel: ModelPanel, settings_panel: SettingsPanel,
                 control: ServerControl, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.configure: Configure | None = None  # set by the window: the profiles apply a model's settings
        model_panel.modelChosen.connect(self.opened)
        model_panel.modelChecked.connect(self._on_checked)
        settings_panel.configChanged.connect(self.edited)
        settings_panel.planned.connect(self.planned)
        settings_panel.probeFinished.connect(self.probed)
        control.started.connect(self.started)

    def _on_checked(self, checked: CheckedModel) -> None:
        if not self.session.is_for(checked.path):
            return  # an older file's late answer (the model panel drops those already)
        self.checked.emit(checked)
        if checked.usable and self.session.config is None and self.configure is not None:
            self.configure(checked)
        self.configured.emit(self.session.config)
