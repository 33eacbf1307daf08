"""The "Advanced" launch settings: KV cache types, flash attention, threads, load mode, experts kept in RAM, engine,
network, API key.

The section starts folded, so its fields are made when it is first shown or a field is first asked for (a property
of the form that names a field builds them all): until then the form keeps the values it was given in a dict that
reads back exactly as the fields would (``values()``), and the fields get them when they are made. 84 widgets fewer
before the window's first paint."""

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
THREADS_MAX, EXPERTS_MAX, PORT_MIN, PORT_MAX = 512, 999, 1, 65535
FIELDS = frozenset({"cache_k", "cache_v", "flash_attn", "threads", "load_mode", "experts_in_ram", "backend",
                    "engine_own", "server_bin", "browse", "host", "port", "pick_free_port", "api_key", "_labels"})


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _unbuilt_values() -> dict[str, Any]:
    """What fresh fields read back (``values()``) before anything was set: the first item of each list, 0 in the
    number fields (the port's least is 1), empty texts."""
    return {"cache_type_k": KV_TYPES[0], "cache_type_v": KV_TYPES[0], "flash_attn": None, "threads": None,
            "load_mode": LOAD_MODES[0], "n_cpu_moe": 0, "backend": BACKEND_EMBEDDED, "server_bin": None,
            "host": "127.0.0.1", "port": PORT_MIN, "pick_free_port": True, "api_key": None}


class AdvancedForm(Retranslating, QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._built = False
        self._has_experts = False
        self._experts_max = EXPERTS_MAX
        self._unbuilt = _unbuilt_values()  # the values while the fields are not made (read as they would read)
        self._experts_set = 0  # the experts field's number, kept also while the row is hidden
        self._own_engine = False
        self._texts = {"server_bin": "", "host": "", "api_key": ""}  # the text fields as they would show

    def __getattr__(self, name: str) -> Any:
        """A field asked for before the section was first shown: the fields are made now."""
        if name in FIELDS and not self.__dict__.get("_built", True):
            self._build()
            return getattr(self, name)
        raise AttributeError(name)

    def setVisible(self, visible: bool) -> None:
        if visible and not self._built:
            self._build()
        super().setVisible(visible)

    def _build(self) -> None:
        self._built = True
        self.cache_k, self.cache_v = QComboBox(self), QComboBox(self)
        for combo in (self.cache_k, self.cache_v):
            combo.addItems(KV_TYPES)
        self.flash_attn = QComboBox(self)
        self.flash_attn.addItems(["", "", ""])  # auto / on / off, texts set in retranslate
        self.threads = QSpinBox(self)
        self.threads.setRange(0, THREADS_MAX)
        self.load_mode = QComboBox(self)
        self.load_mode.addItems(["", "", ""])
        self.experts_in_ram = QSpinBox(self)  # llama-server's --n-cpu-moe: layers whose experts stay in RAM
        self.experts_in_ram.setRange(0, EXPERTS_MAX)
        self.backend = QComboBox(self)
        self.backend.addItems(["", ""])
        self.engine_own = QCheckBox(self)  # unticked: the engine is the app-wide choice, every model gets it
        self.server_bin = QLineEdit(self)
        self.browse = QPushButton(self)
        self.browse.clicked.connect(self._browse_server)
        self.host = QLineEdit(self)
        self.port = QSpinBox(self)
        self.port.setRange(PORT_MIN, PORT_MAX)
        self.pick_free_port = QComboBox(self)
        self.pick_free_port.addItems(["", ""])
        self.api_key = QLineEdit(self)
        self.api_key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        guard_wheel(self.cache_k, self.cache_v, self.flash_attn, self.threads, self.load_mode, self.experts_in_ram,
                    self.backend, self.port, self.pick_free_port)
        self._labels: dict[str, QLabel] = {}
        self._build_form()
        self._connect()
        self.retranslate()
        values, experts = self._unbuilt, self._experts_set
        self._apply(values, experts, self._own_engine)
        self.show_experts(int(self._experts_max) if self._has_experts else None)

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
        if not self._built:
            return  # the fields get their texts when they are made
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
        if not self._built:
            if n_layer:
                self._experts_max = int(n_layer)
                self._experts_set = min(self._experts_set, self._experts_max)
            return
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
        return self.engine_own.isChecked() if self._built else self._own_engine

    def set_engine(self, backend: str, server_bin: str | None, *, only_for_model: bool = False) -> None:
        """Show an engine choice without a model's config (the app-wide one at start-up); no ``changed``."""
        if not self._built:
            self._unbuilt["backend"] = BACKEND_LLAMA_SERVER if backend == BACKEND_LLAMA_SERVER else BACKEND_EMBEDDED
            self._texts["server_bin"] = server_bin or ""
            self._unbuilt["server_bin"] = self._texts["server_bin"].strip() or None
            self._own_engine = only_for_model
            return
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
        if not self._built:
            return {**self._unbuilt, "n_cpu_moe": self._experts_set if self._has_experts else 0}
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
        if not self._built:
            self._set_unbuilt(config)
            return
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

    def _set_unbuilt(self, config: LaunchConfig) -> None:
        """``set_values`` before the fields exist: each value as its field would keep and read it back."""
        kept = self._unbuilt
        kept["cache_type_k"] = config.cache_type_k if config.cache_type_k in KV_TYPES else kept["cache_type_k"]
        kept["cache_type_v"] = config.cache_type_v if config.cache_type_v in KV_TYPES else kept["cache_type_v"]
        kept["flash_attn"] = config.flash_attn
        kept["threads"] = _clamp(config.threads or 0, 0, THREADS_MAX) or None
        kept["load_mode"] = config.load_mode if config.load_mode in LOAD_MODES else LOAD_MODES[0]
        self._experts_set = _clamp(int(config.n_cpu_moe), 0, self._experts_max)
        kept["backend"] = BACKEND_LLAMA_SERVER if config.backend == BACKEND_LLAMA_SERVER else BACKEND_EMBEDDED
        self._texts.update(server_bin=config.server_bin or "", host=config.host, api_key=config.api_key or "")
        kept["server_bin"] = self._texts["server_bin"].strip() or None
        kept["host"] = self._texts["host"].strip() or "127.0.0.1"
        kept["port"] = _clamp(int(config.port), PORT_MIN, PORT_MAX)
        kept["pick_free_port"] = bool(config.pick_free_port)
        kept["api_key"] = self._texts["api_key"].strip() or None

    def _apply(self, values: dict[str, Any], experts: int, own_engine: bool) -> None:
        """The values kept before the fields were made, into the fields (no ``changed``)."""
        fields = (self.cache_k, self.cache_v, self.flash_attn, self.threads, self.load_mode, self.experts_in_ram,
                  self.backend, self.server_bin, self.host, self.port, self.pick_free_port, self.api_key,
                  self.engine_own)
        for widget in fields:
            widget.blockSignals(True)
        try:
            self.cache_k.setCurrentText(values["cache_type_k"])
            self.cache_v.setCurrentText(values["cache_type_v"])
            self.flash_attn.setCurrentIndex({None: 0, True: 1, False: 2}[values["flash_attn"]])
            self.threads.setValue(values["threads"] or 0)
            self.load_mode.setCurrentIndex(LOAD_MODES.index(values["load_mode"]))
            if self._experts_max != EXPERTS_MAX:
                self.experts_in_ram.setMaximum(self._experts_max)
            self.experts_in_ram.setValue(experts)
            self.backend.setCurrentIndex(1 if values["backend"] == BACKEND_LLAMA_SERVER else 0)
            self.server_bin.setText(self._texts["server_bin"])
            self.host.setText(self._texts["host"])
            self.port.setValue(values["port"])
            self.pick_free_port.setCurrentIndex(0 if values["pick_free_port"] else 1)
            self.api_key.setText(self._texts["api_key"])
            self.engine_own.setChecked(own_engine)
        finally:
            for widget in fields:
                widget.blockSignals(False)
        self._sync_backend()
