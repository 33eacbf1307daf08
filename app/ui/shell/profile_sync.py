"""Keeps each model's profile (launch settings, probe result, expected hash) and the recent list in step
with what the user does, and hands a checked model its remembered settings."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject

from app.ui.shell.settings_store import SettingsStore
from app.ui.steps.server.server_control import config_for


class ProfileSync(QObject):
    def __init__(self, store: SettingsStore, model_panel: Any, settings_panel: Any, parent: QObject) -> None:
        super().__init__(parent)
        self.store, self.model, self.settings_panel = store, model_panel, settings_panel
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

    def on_model_checked(self, checked: Any) -> None:
        usable = checked.info is not None and not any(c.is_error for c in checked.checks)
        if not usable:
            self.settings_panel.clear_model()
            return
        current = self.settings_panel.info
        if current is not None and str(current.path) == str(checked.info.path):
            return  # the same model re-checked (e.g. its hash): keep the settings and any running probe
        profile = self.settings.profile(checked.path)
        config = config_for(checked.path, checked.info, profile.get("launch_config"))
        self.settings_panel.set_model(checked.info, config, profile.get("probe"))

    def on_expected_hash(self, digest: str) -> None:
        if self.model.path:
            self.settings.update_profile(self.model.path, expected_sha256=digest or None)
            self.store.save_soon()

    def on_config_changed(self, config: Any) -> None:
        self.settings.update_profile(config.model, launch_config=config.to_dict())
        self.store.save_soon()

    def on_probe_finished(self, result: Any) -> None:
        if self.model.path:
            stored = result.to_dict()
            stored["saved_at"] = time.time()
            self.settings.update_profile(self.model.path, probe=stored)
            self.store.save_soon()
