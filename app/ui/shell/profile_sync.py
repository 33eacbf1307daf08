"""Keeps each model's profile (launch settings, probe result, expected hash) and the recent list in step
with what the user does, and hands a checked model its remembered settings (through the window's ModelSession)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.core.launch.config import LaunchConfig
from app.core.session import CheckedModel, ModelSession
from app.ui.shell.settings_store import SettingsStore

if TYPE_CHECKING:
    from app.core.probe.result import ProbeResult
    from app.ui.steps.model.model_panel import ModelPanel
    from app.ui.steps.settings.settings_panel import SettingsPanel


class ProfileSync(QObject):
    def __init__(self, store: SettingsStore, session: ModelSession, model_panel: ModelPanel,
                 settings_panel: SettingsPanel, parent: QObject) -> None:
        super().__init__(parent)
        self.store, self.session, self.model, self.settings_panel = store, session, model_panel, settings_panel
        model_panel.modelChosen.connect(self.on_model_chosen)
        model_panel.modelChecked.connect(self.on_model_checked)
        model_panel.expectedHashChanged.connect(self.on_expected_hash)
        settings_panel.configChanged.connect(self.on_config_changed)
        settings_panel.probeFinished.connect(self.on_probe_finished)

    @property
    def settings(self):
        return self.store.settings

    def on_model_chosen(self, path: str) -> None:
        self.settings_panel.clear_model()
        self.settings.remember_model(path)
        self.store.save_soon()
        self.model.set_recent(self.settings.recent_models)

    def on_model_checked(self, checked: CheckedModel) -> None:
        if not checked.usable:
            self.settings_panel.clear_model()
            return
        if self.session.config is not None:
            return  # the same model re-checked (e.g. its hash): keep the settings and any running probe
        profile = self.settings.profile(checked.path)
        self.session.use_profile(profile.get("launch_config"), profile.get("probe"))
        self.settings_panel.show_model()

    def on_expected_hash(self, digest: str) -> None:
        if self.model.path:
            self.settings.update_profile(self.model.path, expected_sha256=digest or None)
            self.store.save_soon()

    def on_config_changed(self, config: LaunchConfig) -> None:
        self.settings.update_profile(config.model, launch_config=config.to_dict())
        self.store.save_soon()

    def on_probe_finished(self, result: ProbeResult) -> None:
        if self.model.path:
            self.settings.update_profile(self.model.path, probe=result.to_dict())  # saved_at: set by the cache
            self.store.save_soon()
