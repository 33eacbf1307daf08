"""The "Advanced" launch settings: KV cache types, flash attention, threads, load mode, experts kept in RAM, engine,
network, API key."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, LaunchConfig
from app.ui.i18n import Retranslating
from app.ui.widgets.wheel_guard import guard_wheel

KV_TYPES = ("f16", "bf16", "f32", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl")
LOAD_MODES = ("mmap", "none", "mlock")


class AdvancedForm(Retranslating, QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cache_k, self.cache_v = QComboBox(self), QComboBox(self)
        for combo in (self.cache_k, self.cache_v):
            combo.addItems(KV_TYPES)
        self.flash_attn = QComboBox(self)
        self.flash_attn.addItems(["", "", ""])  # auto / on / off, texts set in retranslate
        self.threads = QSpinBox(self)
        self.threads.setRange(0, 512)
        self.load_mode = QComboBox(self)
        self.load_mode.addItems(["", "", ""])
        self.experts_in_ram = QSpinBox(self)  # llama-server's --n-cpu-moe: layers whose experts stay in RAM
        self.experts_in_ram.setRange(0, 999)
        self.backend = QComboBox(self)
        self.backend.addItems(["", ""])
        self.engine_own = QCheckBox(self)  # unticked: the engine is the app-wide choice, every model gets it
        self.server_bin = QLineEdit(self)
        self.browse = QPushButton(self)
        self.browse.clicked.connect(self._browse_server)
        self.host = QLineEdit(self)
        self.port = QSpinBox(self)
        self.port.setRange(1, 65535)
        self.pick_free_port = QComboBox(self)
        self.pick_free_port.addItems(["", ""])
        self.api_key = QLineEdit(self)
        self.api_key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        guard_wheel(self.cache_k, self.cache_v, self.flash_attn, self.threads, self.load_mode, self.experts_in_ram,
                    self.backend, self.port, self.pick_free_port)
        self._labels: dict[str, QLabel] = {}
        self._has_experts = False
        self._build_form()
        self._connect()
        self.retranslate()
        self._sync_backend()
        self.show_experts(None)

    def _build_form(self) -> None:
        form = QFormLayout(self)
        form.setContentsMargins(12, 0, 0, 0)
        server_row = QHBoxLayout()
        server_row.addWidget(self.server_bin, 1)
        server_row.addWidget(self.browse)
        backend_row = QHBoxLayout()
        backend_row.addWidget(self.backend, 1)
        backend_row.addWidget(self.engine_own)
        rows = [("cache_k", self.cache_k), ("cache_v", self.cache_v), ("flash_attn", self.flash_attn),
                ("threads", self.threads), ("load_mode", self.load_mode), ("experts_in_ram", self.experts_in_ram),
                ("backend", backend_row),
                ("server_bin", server_row), ("host", self.host), ("port", self.port),
                ("pick_free_port", self.pick_free_port), ("api_key", self.api_key)]
        for key, field in rows:
            label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
            self._labels[key] = label
            form.addRow(label, field)

    def _connect(self) -> None:
        for combo in (self.cache_k, self.cache_v, self.flash_attn, self.load_mode, self.backend, self.pick_free_port):
            combo.currentIndexChanged.connect(self.changed)
        for spin in (self.threads, self.experts_in_ram, self.port):
            spin.valueChanged.connect(self.changed)
        for edit in (self.server_bin, self.host, self.api_key):
            edit.editingFinished.connect(self.changed)
        self.backend.currentIndexChanged.connect(self._sync_backend)
        self.engine_own.toggled.connect(self.changed)


    def retranslate(self) -> None:
        texts = {
            "cache_k": self.tr("KV cache type (K)"), "cache_v": self.tr("KV cache type (V)"),
            "flash_attn": self.tr("Flash attention"), "threads": self.tr("CPU threads"),
            "load_mode": self.tr("Loading"), "experts_in_ram": self.tr("Experts on the processor"),
            "backend": self.tr("Engine"),
            "server_bin": self.tr("llama-server program"), "host": self.tr("Listen address"),
            "port": self.tr("Port"), "pick_free_port": self.tr("If the port is busy"), "api_key": self.tr("API key"),
        }
        for key, text in texts.items():
            self._labels[key].setText(text)
        for i, text in enumerate((self.tr("automatic"), self.tr("on"), self.tr("off"))):
            self.flash_attn.setItemText(i, text)
        for i, text in enumerate((self.tr("map the file (fast start)"), self.tr("read into memory"),
                                  self.tr("map and lock in RAM"))):
            self.load_mode.setItemText(i, text)
        self.backend.setItemText(0, self.tr("built-in (llama-cpp-python)"))
        self.backend.setItemText(1, self.tr("llama-server (llama.cpp)"))
        self.engine_own.setText(self.tr("only for this model"))
        self.engine_own.setToolTip(self.tr("Unticked, the engine and the llama-server program are the same for "
                                           "every model you open."))
        self.pick_free_port.setItemText(0, self.tr("use a free port"))
        self.pick_free_port.setItemText(1, self.tr("stop with an error"))
        self.threads.setSpecialValueText(self.tr("automatic"))
        self.experts_in_ram.setSpecialValueText(self.tr("none"))
        self.experts_in_ram.setSuffix(" " + self.tr("layers"))
        self.experts_in_ram.setToolTip(self.tr("For a model with experts: the experts of this many layers stay in the "
                                               "computer's memory while everything else runs on the graphics card. "
                                               "Often much faster than putting fewer layers on the card. Only the "
                                               "llama-server engine can do it; \"Find safe settings\" measures the "
                                               "best number."))
        self.server_bin.setPlaceholderText(self.tr("found automatically"))
        self.browse.setText(self.tr("Browse…"))
        self.api_key.setPlaceholderText(self.tr("none (only this computer can connect)"))

    def _sync_backend(self) -> None:
        is_server = self.backend.currentIndex() == 1
        self.server_bin.setEnabled(is_server)
        self.browse.setEnabled(is_server)
        self.experts_in_ram.setEnabled(is_server)

    def show_experts(self, n_layer: int | None) -> None:
        """The experts row only for a model that has experts (``n_layer``: its layer count; None: no experts)."""
        shown = self._has_experts = bool(n_layer)
        self.experts_in_ram.setVisible(shown)
        self._labels["experts_in_ram"].setVisible(shown)
        if n_layer:
            self.experts_in_ram.setMaximum(int(n_layer))

    def _browse_server(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # imported when used: faster start-up

        path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose the llama-server program"))
        if path:
            self.server_bin.setText(path)
            self.changed.emit()

    def engine_only_for_model(self) -> bool:
        return self.engine_own.isChecked()

    def set_engine(self, backend: str, server_bin: str | None, *, only_for_model: bool = False) -> None:
        """Show an engine choice without a model's config (the app-wide one at start-up); no ``changed``."""
        for widget in (self.backend, self.server_bin, self.engine_own):
            widget.blockSignals(True)
        try:
            self.backend.setCurrentIndex(1 if backend == BACKEND_LLAMA_SERVER else 0)
            self.server_bin.setText(server_bin or "")
            self.engine_own.setChecked(only_for_model)
        finally:
            for widget in (self.backend, self.server_bin, self.engine_own):
                widget.blockSignals(False)
        self._sync_backend()

    def values(self) -> dict[str, Any]:
        flash = (None, True, False)[self.flash_attn.currentIndex()]
        return {
            "cache_type_k": self.cache_k.currentText(), "cache_type_v": self.cache_v.currentText(),
            "flash_attn": flash, "threads": self.threads.value() or None,
            "load_mode": LOAD_MODES[self.load_mode.currentIndex()],
            "n_cpu_moe": self.experts_in_ram.value() if self._has_experts else 0,
            "backend": (BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER)[self.backend.currentIndex()],
            "server_bin": self.server_bin.text().strip() or None,
            "host": self.host.text().strip() or "127.0.0.1", "port": self.port.value(),
            "pick_free_port": self.pick_free_port.currentIndex() == 0,
            "api_key": self.api_key.text().strip() or None,
        }

    def set_values(self, config: LaunchConfig) -> None:
        widgets = (self.cache_k, self.cache_v, self.flash_attn, self.threads, self.load_mode, self.experts_in_ram,
                   self.backend, self.server_bin, self.host, self.port, self.pick_free_port, self.api_key)
        for widget in widgets:
            widget.blockSignals(True)
        try:
            self.cache_k.setCurrentText(config.cache_type_k)
            self.cache_v.setCurrentText(config.cache_type_v)
            self.flash_attn.setCurrentIndex({None: 0, True: 1, False: 2}[config.flash_attn])
            self.threads.setValue(config.threads or 0)
            self.load_mode.setCurrentIndex(LOAD_MODES.index(config.load_mode) if config.load_mode in LOAD_MODES else 0)
            self.experts_in_ram.setValue(int(config.n_cpu_moe))
            self.backend.setCurrentIndex(1 if config.backend == BACKEND_LLAMA_SERVER else 0)
            self.server_bin.setText(config.server_bin or "")
            self.host.setText(config.host)
            self.port.setValue(int(config.port))
            self.pick_free_port.setCurrentIndex(0 if config.pick_free_port else 1)
            self.api_key.setText(config.api_key or "")
        finally:
            for widget in widgets:
                widget.blockSignals(False)
        self._sync_backend()
