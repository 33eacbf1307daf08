"""Connect to a server: chat with another llama-server, an Ollama or an LM Studio server instead of a local model.

The dialog asks for the address and the API key, lets core ask the server who it is (``app.core.remote.connect``,
off the GUI thread) and shows what came back: the kind, the models, the real context, or the plain sentence of a
refusal. ``connected(RemoteServer)`` fires when the user accepts a server that answered."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.problem import Problem
from app.core.remote import RemoteServer, connect
from app.ui.widgets.problem_view import problem_text, render
from app.ui.workers import run_task


class ConnectDialog(QDialog):
    connected = Signal(object)  # RemoteServer

    def __init__(self, parent: QWidget | None = None, *, url: str = "", api_key: str = "") -> None:
        super().__init__(parent)
        self.remote: RemoteServer | None = None
        self.setWindowTitle(self.tr("Connect to a server"))
        self.intro = QLabel(self.tr("Chat with a model that runs elsewhere: another computer running this app, "
                                    "llama.cpp, Ollama or LM Studio."), self, wordWrap=True,
                            textFormat=Qt.TextFormat.PlainText)
        self.address = QLineEdit(url, self, placeholderText="http://192.168.1.20:8080")
        self.key = QLineEdit(api_key, self, placeholderText=self.tr("none"))
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.check_button = QPushButton(self.tr("Check"), self)
        self.check_button.clicked.connect(self.check)
        self.models = QComboBox(self)
        self.models.hide()
        self.answer = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)  # the server's, or why not
        ok, cancel = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel
        self.buttons = QDialogButtonBox(ok | cancel, self)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Chat with it"))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow(self.tr("Address"), self.address)
        form.addRow(self.tr("API key"), self.key)
        form.addRow(self.tr("Model"), self.models)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(form)
        layout.addWidget(self.check_button)
        layout.addWidget(self.answer)
        layout.addWidget(self.buttons)
        self.address.textChanged.connect(self._forget)
        self.key.textChanged.connect(self._forget)
        self._forget()

    def check(self) -> None:
        """Ask the server (on the pool): its kind, models and context, or why it cannot be used."""
        self.check_button.setEnabled(False)
        self.answer.setText(self.tr("Asking the server…"))
        run_task(connect, self.address.text(), self.key.text(), on_done=self._on_answer, on_error=self._on_refusal,
                 owner=self)

    def _on_answer(self, remote: RemoteServer) -> None:
        self.remote = remote
        self.check_button.setEnabled(True)
        self.models.clear()
        self.models.addItems(list(remote.models))
        if remote.model in remote.models:
            self.models.setCurrentText(remote.model)
        self.models.setVisible(len(remote.models) > 1)
        self.answer.setStyleSheet("")
        self.answer.setText(render(remote.summary()))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(True)

    def _on_refusal(self, error: BaseException) -> None:
        self.check_button.setEnabled(True)
        self.answer.setStyleSheet("color: #c62828;")
        if isinstance(error, Problem):  # a ChatError or UserError: core's sentence
            self.answer.setText(problem_text(error))
        else:
            self.answer.setText(self.tr("The server could not be asked: {error}").format(error=error))

    def _forget(self) -> None:
        self.remote = None
        self.models.hide()
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)
        self.answer.setText("")

    def accept(self) -> None:
        if self.remote is None:
            return
        chosen = self.models.currentText()
        remote = self.remote.with_model(chosen) if chosen and chosen != self.remote.model else self.remote
        self.connected.emit(remote)
        super().accept()


def ask_for_remote(parent: QWidget, use: Callable[[RemoteServer], None]) -> ConnectDialog:
    """Open the dialog (not modal to the whole app); ``use(remote)`` when the user accepts a server."""
    dialog = ConnectDialog(parent)
    dialog.connected.connect(use)
    dialog.finished.connect(dialog.deleteLater)
    dialog.open()
    return dialog
