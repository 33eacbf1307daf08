"""Share the running model with other devices on this network: where to listen, the key (masked, Copy), the address.

Core does the work (``app.core.server.lan_share``: a proxy with the key and a request limit in front of the
server, which stays on this computer only); this box asks for the choice and shows the result. The share follows
the bridge's supervisor: a new model's server is shared with the same key, and it stops with its supervisor.

On Windows a share beyond this computer meets Windows Defender Firewall: before it starts the box says what Windows
may ask; once it listens, the core's verdict (``app.core.server.share_firewall``, read off the GUI thread) says
when Windows is asking now (and the verdict is read again until the question is answered) or when a Block rule keeps
other devices out, with the way to allow it and a button that keeps the share on this computer instead."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.core.launch.ports import is_loopback, masked_key
from app.core.problem import UserError
from app.core.server.lan_share import (
    ALL_NETWORKS,
    DEFAULT_SHARE_PORT,
    LOOPBACK,
    LanShare,
    ShareSettings,
    lan_addresses,
    reach_sentence,
)
from app.ui.i18n import Retranslating
from app.ui.widgets.problem_view import problem_text, render
from app.ui.widgets.wheel_guard import guard_wheel
from app.ui.workers import run_task

if TYPE_CHECKING:
    from app.core.server.share_firewall import FirewallCheck
    from app.core.server.supervisor import Supervisor
    from app.ui.steps.server.supervisor_bridge import SupervisorBridge

ASK_POLL_MS = 3000  # while Windows' question is on the screen, the verdict is read again this often
ASK_POLLS = 60  # for three minutes; an unanswered question is then left to the sentence already shown


class _WhereBox(QComboBox):
    """The "where" choice: the network addresses join the list before the user first opens it or moves through it
    with the keyboard (reading them loads psutil and asks every interface: not needed for the window's first paint,
    which shows only the current choice)."""

    def __init__(self, parent: QWidget, before_use: Callable[[], None]) -> None:
        super().__init__(parent)
        self._before_use = before_use

    def showPopup(self) -> None:
        self._before_use()
        super().showPopup()

    def keyPressEvent(self, event) -> None:
        self._before_use()
        super().keyPressEvent(event)


class ShareBox(Retranslating, QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.share: LanShare | None = None
        self._settings: ShareSettings | None = None
        self._supervisor: Supervisor | None = None
        self._lan: list[str] | None = None  # this computer's network addresses, read when the list is first used
        # Seams for the tests: the platform, and the core's firewall reader (None: share_firewall's, loaded with the
        # first share beyond this computer on Windows; the window's first paint does without it).
        self.windows = sys.platform == "win32"
        self.firewall_check: Callable[[str, int], FirewallCheck] | None = None
        self.ask_poll_ms = ASK_POLL_MS
        self._firewall: FirewallCheck | None = None  # the verdict on the running share, when one came back
        self._firewall_round = self._polls = 0
        self.enabled = QCheckBox(self)
        self.enabled.toggled.connect(self._on_toggled)
        self.where = _WhereBox(self, self.load_addresses)
        self.where.currentIndexChanged.connect(lambda _index: self._render())  # the warning follows the choice
        self.port = QSpinBox(self, minimum=1, maximum=65535, value=DEFAULT_SHARE_PORT)
        guard_wheel(self.where, self.port)  # scrolling the Server step passes over them without changing them
        self.warning = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.warning.setStyleSheet("color: #8a5a00;")
        self.addresses = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.addresses.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key = QLineEdit(self, readOnly=True)
        self.copy_button = QPushButton(self)
        self.copy_button.clicked.connect(self._copy_key)
        self.key_note = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.firewall = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.firewall.setStyleSheet("color: #8a5a00;")
        self.firewall.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.keep_local = QPushButton(self)
        self.keep_local.clicked.connect(self._share_locally)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.enabled, 0, 0, 1, 3)
        layout.addWidget(self.where, 1, 0, 1, 2)
        layout.addWidget(self.port, 1, 2)
        layout.addWidget(self.warning, 2, 0, 1, 3)
        layout.addWidget(self.addresses, 3, 0, 1, 3)
        layout.addWidget(self.key, 4, 0, 1, 2)
        layout.addWidget(self.copy_button, 4, 2)
        layout.addWidget(self.key_note, 5, 0, 1, 3)
        layout.addWidget(self.firewall, 6, 0, 1, 3)
        layout.addWidget(self.keep_local, 7, 0, 1, 1)
        layout.setColumnStretch(0, 1)
        self.retranslate()
        self._render()

    def retranslate(self) -> None:
        self.enabled.setText(self.tr("Share with other devices on this network"))
        current = self.where.currentData()
        self.where.clear()
        self.where.addItem(self.tr("This computer only"), LOOPBACK)
        self.where.addItem(self.tr("All networks of this computer"), ALL_NETWORKS)
        for address in self._lan or ():
            self.where.addItem(self.tr("Only the network of {address}").format(address=address), address)
        index = self.where.findData(current if current is not None else LOOPBACK)  # loopback unless chosen
        self.where.setCurrentIndex(max(0, index))
        self.port.setToolTip(self.tr("Port other devices connect to"))
        self.copy_button.setText(self.tr("Copy key"))
        self.keep_local.setText(self.tr("Keep it on this computer"))
        self.key_note.setText(self.tr("Copy the key and give it to the other device (it is never shown in full); "
                                      "turning sharing off and on again makes a new one."))
        self._render()

    def load_addresses(self) -> None:
        """Add "Only the network of ..." for each of this computer's addresses (once; the choice is kept)."""
        if self._lan is None:
            self._lan = lan_addresses()
            self.retranslate()

    def set_bridge(self, bridge: SupervisorBridge) -> None:
        bridge.supervisorChanged.connect(self.set_supervisor)
        self.set_supervisor(bridge.supervisor)

    @Slot(object)
    def set_supervisor(self, supervisor: Supervisor | None) -> None:
        """Another model's server: share it too (same key), or stop sharing when there is none."""
        self._supervisor = supervisor
        if self.share is not None:
            self.share.close()  # the old supervisor may live on unused; its share must not
            self.share = None
            self._forget_firewall()
        if self.enabled.isChecked():
            self._start_share()
        self._render()

    def _on_toggled(self, on: bool) -> None:
        if on:
            self._settings = ShareSettings(host=self.where.currentData() or LOOPBACK, port=self.port.value())
            self._start_share()
        else:
            if self.share is not None:
                self.share.close()
            self.share, self._settings = None, None  # the key goes with it
            self._forget_firewall()
        self._render()

    def _start_share(self) -> None:
        if self._supervisor is None or self._settings is None:
            self.addresses.setText(self.tr("Start the model first; it is shared as soon as it runs."))
            return
        share = LanShare(self._supervisor, self._settings)
        try:
            share.start()
        except UserError as error:
            self.addresses.setText(problem_text(error))
            self.enabled.blockSignals(True)
            self.enabled.setChecked(False)
            self.enabled.blockSignals(False)
            self._settings = None
            return
        self.share = share
        if self._beyond_firewall(self._settings.host):
            self._polls = 0
            self._read_firewall()

    def _beyond_firewall(self, host: str) -> bool:
        """Whether Windows Defender Firewall stands between other devices and a share on ``host``."""
        return self.windows and not is_loopback(host)

    def _forget_firewall(self) -> None:
        """A verdict belongs to one share: a later answer for an earlier one is dropped."""
        self._firewall, self._firewall_round = None, self._firewall_round + 1

    def _read_firewall(self) -> None:
        share, round_ = self.share, self._firewall_round
        if share is None or self._settings is None:
            return
        port = share.proxy.bound_port or self._settings.port
        if self.firewall_check is None:
            from app.core.server.share_firewall import check_share_firewall

            self.firewall_check = check_share_firewall
        run_task(self.firewall_check, self._settings.host, port, owner=self,
                 on_done=lambda check: self._on_firewall(check, round_))

    def _on_firewall(self, check: FirewallCheck, round_: int) -> None:
        if round_ != self._firewall_round or self.share is None:
            return
        from app.core.server.share_firewall import Verdict

        self._firewall = check
        if check.verdict is Verdict.ASKS and self._polls < ASK_POLLS:  # read again once the question is answered
            self._polls += 1
            QTimer.singleShot(self.ask_poll_ms, self,
                              lambda: self._read_firewall() if round_ == self._firewall_round else None)
        self._render()

    def _share_locally(self) -> None:
        """The other fix: the share stays on this computer (no firewall between it and its programs)."""
        self.enabled.setChecked(False)
        self.where.setCurrentIndex(max(0, self.where.findData(LOOPBACK)))
        self.enabled.setChecked(True)

    def _render(self) -> None:
        share = self.share
        sharing = share is not None and share.running
        self.where.setEnabled(not self.enabled.isChecked())
        self.port.setEnabled(not self.enabled.isChecked())
        host = self._settings.host if self._settings is not None else self.where.currentData() or LOOPBACK
        warning = render(reach_sentence(host))
        if self._beyond_firewall(host):  # what Windows may ask, before it does
            from app.core.server.share_firewall import ask_ahead

            warning += " " + render(ask_ahead(host, windows=True))
        self.warning.setText(warning)  # never "anyone on the network" for this computer only
        self.warning.setVisible(self.enabled.isChecked() or self.where.currentData() != LOOPBACK)
        self.key.setText(masked_key(self._settings.api_key) if sharing and self._settings else "")  # projectors
        for widget in (self.key, self.copy_button, self.key_note):
            widget.setVisible(sharing)
        if share is not None and sharing:
            self.addresses.setText(render(share.summary()))
        self.addresses.setVisible(self.enabled.isChecked())
        told = self._firewall if sharing else None
        self.firewall.setText("\n".join(render(t) for t in (told.message, told.next_step) if t) if told else "")
        self.firewall.setVisible(bool(self.firewall.text()))
        self.keep_local.setVisible(told is not None and told.allow is not None)  # a Block: the other fix applies

    def _copy_key(self) -> None:
        if self._settings is not None:
            QGuiApplication.clipboard().setText(self._settings.api_key)
