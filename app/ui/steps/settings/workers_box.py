"""The Settings step's workers: other computers that lend their memory to this model (llama.cpp RPC), and
"Share this computer as a worker".

Addresses are checked off the GUI thread (app.core.rpc.check); the checks go to the Machine step too
(``worker_checks()``). Sharing starts llama.cpp's rpc-server under the app's supervision
(app.core.server.shared_worker), bound to this computer only unless the user types another address, with the warning
in plain words.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QListWidget, QPushButton, QVBoxLayout, QWidget

from app.core.problem import UserError
from app.core.rpc.worker import DEFAULT_WORKER_PORT, parse_worker, parse_workers
from app.core.server.shared_worker import LOOPBACK, SharedWorker, share_warning
from app.ui.i18n import Retranslating
from app.ui.steps.machine.worker_devices import worker_checks
from app.ui.widgets import look
from app.ui.workers import run_task


def _start_shared(host: str, port: int, server_bin: str | None) -> SharedWorker:  # worker thread
    shared = SharedWorker(host=host, port=port, server_bin=server_bin)
    shared.start()
    shared.wait_ready()
    return shared


class WorkersBox(Retranslating, QWidget):
    """Signal ``changed()`` when the list of workers changes; ``addresses()`` is what the launch config gets.
    A shared worker is a supervised child: it ends with the app (parent-death signal), or with ``stop_sharing``."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.server_bin: str | None = None
        self.shared: SharedWorker | None = None
        self.heading, self.status = (QLabel(self, textFormat=Qt.TextFormat.PlainText) for _ in range(2))
        self.status.setWordWrap(True)
        look.hint(self.status)
        self.list = QListWidget(self)
        self.list.setMaximumHeight(90)
        self.address = QLineEdit(self)
        self.add, self.remove, self.recheck = QPushButton(self), QPushButton(self), QPushButton(self)
        self.share_address = QLineEdit(f"{LOOPBACK}:{DEFAULT_WORKER_PORT}", self)
        self.share = QPushButton(self)
        self.share_warning = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.share_warning.setWordWrap(True)
        self._layout()
        self.add.clicked.connect(self._add)
        self.address.returnPressed.connect(self._add)
        self.remove.clicked.connect(self._remove)
        self.recheck.clicked.connect(self.check)
        self.share.clicked.connect(self._toggle_share)
        self.share_address.textChanged.connect(self._render_warning)
        self.retranslate()

    def _layout(self) -> None:
        add_row, share_row = QHBoxLayout(), QHBoxLayout()
        for widget in (self.address, self.add, self.remove, self.recheck):
            add_row.addWidget(widget, 1 if widget is self.address else 0)
        share_row.addWidget(self.share_address, 1)
        share_row.addWidget(self.share)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for item in (self.heading, self.list, add_row, self.status, share_row, self.share_warning):
            if isinstance(item, QHBoxLayout):
                layout.addLayout(item)
            else:
                layout.addWidget(item)

    def retranslate(self) -> None:
        self.heading.setText(self.tr("Other computers (workers) that lend their memory to this model"))
        self.address.setPlaceholderText(self.tr("Address, e.g. 192.168.1.20:50052"))
        self.add.setText(self.tr("Add"))
        self.remove.setText(self.tr("Remove"))
        self.recheck.setText(self.tr("Check again"))
        self.share.setText(self.tr("Stop sharing") if self.shared is not None else
                           self.tr("Share this computer as a worker"))
        self._render_checks(worker_checks().latest)
        self._render_warning()

    # --- the list --------------------------------------------------------------------------------
    def addresses(self) -> tuple[str, ...]:
        return tuple(self.list.item(i).text() for i in range(self.list.count()))

    def set_addresses(self, addresses: tuple[str, ...]) -> None:
        if tuple(addresses) == self.addresses():
            return
        self.list.clear()
        self.list.addItems(list(addresses))
        self.check()

    def _add(self) -> None:
        try:
            worker = parse_worker(self.address.text())
        except UserError as error:
            self.status.setText(error.message.render())
            return
        if worker.address not in self.addresses():
            self.list.addItem(worker.address)
            self.changed.emit()
            self.check()
        self.address.clear()

    def _remove(self) -> None:
        for item in self.list.selectedItems():
            self.list.takeItem(self.list.row(item))
        self.changed.emit()
        self.check()

    def check(self) -> None:
        workers = parse_workers(self.addresses())
        if not workers:
            worker_checks().publish(())
            self._render_checks(())
            return
        self.status.setText(self.tr("Checking the workers…"))
        from app.core.rpc.check import check_workers  # the worker protocol: with the first check, not at start-up

        run_task(check_workers, workers, on_done=self._on_checked, owner=self)

    def _on_checked(self, checks) -> None:
        worker_checks().publish(checks)
        self._render_checks(checks)
        self.changed.emit()  # the plan reads the memory they reported

    def _render_checks(self, checks) -> None:
        self.status.setText("\n".join(c.sentence().render() for c in checks))

    # --- sharing this computer ---------------------------------------------------------------------
    def _share_target(self) -> tuple[str, int] | None:
        try:
            worker = parse_worker(self.share_address.text())
        except UserError:
            return None
        return worker.host, worker.port

    def _render_warning(self, *_: object) -> None:
        target = self._share_target()
        self.share_warning.setText(share_warning(*target).render() if target else "")

    def stop_sharing(self) -> None:
        if self.shared is not None:
            self.shared.stop()
            self.shared = None
            self.retranslate()

    def _toggle_share(self) -> None:
        if self.shared is not None:
            self.stop_sharing()
            return
        target = self._share_target()
        if target is None:
            return
        self.share.setEnabled(False)
        run_task(_start_shared, *target, self.server_bin, on_done=self._on_shared, on_error=self._on_share_failed,
                 owner=self)

    def _on_shared(self, shared: SharedWorker) -> None:
        self.shared = shared
        self.share.setEnabled(True)
        self.retranslate()
        self.share_warning.setText(shared.warning.render() + "\n" + self.tr("Sharing now."))

    def _on_share_failed(self, error: BaseException) -> None:
        self.share.setEnabled(True)
        message = error.message.render() if isinstance(error, UserError) else self.tr("The worker did not start.")
        self.share_warning.setText(message)
