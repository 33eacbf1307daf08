"""Keeps each model's profile (launch settings, probe result, expected hash), the recent list and the app-wide
engine in step with what the user does, and hands a checked model its remembered settings (through the window's
ModelSession). The engine is the app-wide choice unless the user ticked "only for this model"; until anyone chose
one it is automatic (llama-server, or the built-in engine with one sentence why); a server that reaches Ready with
another engine than the settings gave it remembers that one (``on_server_ready``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.core.launch.config import LaunchConfig
from app.core.session import CheckedModel
from app.ui.shell.settings_store import SettingsStore

if TYPE_CHECKING:
    from app.core.probe.result import ProbeResult
    from app.ui.shell.session_owner import SessionOwner
    from app.ui.steps.model.model_panel import ModelPanel
    from app.ui.steps.settings.settings_panel import SettingsPanel


class ProfileSync(QObject):
    """Hears the window's :class:`SessionOwner`; its ``configure`` is the one place a checked model gets its
    settings (the owner calls it between ``checked`` and ``configured``)."""

    def __init__(self, store: SettingsStore, owner: SessionOwner, model_panel: ModelPanel,
                 settings_panel: SettingsPanel, parent: QObject) -> None:
        super().__init__(parent)
        self.store, self.session, self.model, self.settings_panel = store, owner.session, model_panel, settings_panel
        owner.opened.connect(self.on_model_chosen)
        owner.checked.connect(self.on_model_checked)
        owner.configure = self.configure
        owner.edited.connect(self.on_config_changed)
        owner.probed.connect(self.on_probe_finished)
        model_panel.expectedHashChanged.connect(self.on_expected_hash)
        settings_panel.engineChanged.connect(self.on_engine_changed)
        settings_panel.show_engine(*self.settings.engine)  # before any model: the app-wide choice
        self._show_engine_reason(None)

    @property
    def settings(self):
        return self.store.settings

    def on_model_chosen(self, path: str) -> None:
        self.settings_panel.clear_model()
        self.settings_panel.show_engine(*self.settings.engine_for(path),
                                        only_for_model=self.settings.engine_override(path) is not None)
        self._show_engine_reason(path)
        self.settings.remember_model(path)
        self.store.save_soon()
        self.model.set_recent(self.settings.recent_models)

    def on_model_checked(self, checked: CheckedModel) -> None:
        if not checked.usable:
            self.settings_panel.clear_model()

    def configure(self, checked: CheckedModel) -> None:
        """A usable model checked for the first time in this session: its profile's settings (or first-run
        defaults) into the session and the Settings step. (Re-checked, e.g. its hash, it keeps its settings and any
        running probe: the owner does not ask again.)"""
        profile = self.settings.profile(checked.path)
        own = self.settings.engine_override(checked.path)
        engine = own or self.settings.engine
        self.session.use_profile(profile.get("launch_config"), profile.get("probe"), engine)
        self.settings_panel.show_engine(*engine, only_for_model=own is not None)
        self._show_engine_reason(checked.path)
        self.settings_panel.show_model()

    def on_expected_hash(self, digest: str) -> None:
        if self.model.path:
            self.settings.update_profile(self.model.path, expected_sha256=digest or None)
            self.store.save_soon()

    def on_config_changed(self, config: LaunchConfig) -> None:
        self.settings.update_profile(config.model, launch_config=config.to_dict())
        engine = (config.backend, config.server_bin)
        own = self.settings_panel.engine_only_for_model()
        if own or self.settings.engine_override(config.model) is not None or self.settings.engine != engine:
            self.settings.set_engine(*engine, config.model, only_this_model=own)
            self._show_engine_reason(config.model)
        self.store.save_soon()

    def on_engine_changed(self, backend: str, server_bin: str | None) -> None:
        """The engine changed with no model shown (the Machine step's "use the other engine"): app-wide."""
        if self.session.config is not None or self.settings_panel.engine_only_for_model():
            return  # a model's config: saved by on_config_changed; a model's own engine shown: not app-wide
        if self.settings.engine != (backend, server_bin):
            self.settings.set_engine(backend, server_bin)
            self._show_engine_reason(None)
            self.store.save_soon()

    def on_server_ready(self, config: LaunchConfig) -> None:
        """A server reached Ready: its engine works, so it becomes the app-wide choice (or the model's own)."""
        if self.settings.engine_worked(config.model, config.backend, config.server_bin):
            self.store.save_soon()

    def _show_engine_reason(self, path: str | None) -> None:
        """The automatic engine's one sentence when llama-server cannot run here; gone once the user chose one."""
        self.settings_panel.show_engine_reason(self.settings.engine_fallback_reason(path))

    def on_probe_finished(self, result: ProbeResult) -> None:
        if self.model.path:
            self.settings.update_profile(self.model.path, probe=result.to_dict())  # saved_at: set by the cache
            self.store.save_soon()
