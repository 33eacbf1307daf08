"""How other programs on this computer connect to the running server: its address and the key made for it.

The key is never shown in full (the window may be on a projector): its first characters and dots, with Copy.
Without a key (the Settings step's choice), the box says that any program here can connect, web pages included."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QGridLayout, QLabel, QLineEdit, QPushButton, QWidget

from app.core.launch.ports import masked_key
from app.ui.i18n import Retranslating
from app.ui.widgets import look


class LocalAccessBox(Retranslating, QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._url = ""
        self._key: str | None = None
        self.caption = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.address = QLineEdit(self, readOnly=True)
        self.copy_address = QPushButton(self)
        self.copy_address.clicked.connect(lambda: self._copy(self.api_url))
        self.key = QLineEdit(self, readOnly=True)
        self.copy_key = QPushButton(self)
        self.copy_key.clicked.connect(lambda: self._copy(self._key or ""))
        self.note = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        look.hint(self.note)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption, 0, 0, 1, 2)
        layout.addWidget(self.address, 1, 0)
        layout.addWidget(self.copy_address, 1, 1)
        layout.addWidget(self.key, 2, 0)
        layout.addWidget(self.copy_key, 2, 1)
        layout.addWidget(self.note, 3, 0, 1, 2)
        layout.setColumnStretch(0, 1)
        self.retranslate()
        self.hide()

    @property
    def api_url(self) -> str:
        """The address an OpenAI-compatible program wants (its "base URL")."""
        return f"{self._url}/v1" if self._url else ""

    def retranslate(self) -> None:
        self.caption.setText(self.tr("Other programs on this computer"))
        self.copy_address.setText(self.tr("Copy address"))
        self.copy_key.setText(self.tr("Copy key"))
        self._render()

    def show_server(self, url: str, key: str | None) -> None:
        """The ready server's address and key (None: it wants none)."""
        self._url, self._key = url, key
        self._render()
        self.show()

    def clear(self) -> None:
        self._url, self._key = "", None
        self._render()
        self.hide()

    def _render(self) -> None:
        self.address.setText(self.api_url)
        self.key.setText(masked_key(self._key))
        for widget in (self.key, self.copy_key):
            widget.setVisible(self._key is not None)
        if self._key is None:
            self.note.setText(self.tr("No key needed: every program on this computer can use the model, web pages "
                                      "open in your browser too. The Settings step can ask for a key again."))
        else:
            self.note.setText(self.tr("Programs you run here connect with this address and key. Web pages cannot "
                                      "use the model without the key; it stays the same while this model stays "
                                      "open."))

    def _copy(self, text: str) -> None:
        if text:
            QGuiApplication.clipboard().setText(text)
