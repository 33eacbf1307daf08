"""Step 2, Model: choose a .gguf (dialog, drag and drop, recent list, demo, "Get a model" from the Hub), see every
check as a row.

Validation, hashing, copying and fetching the demo model all run in workers; this module only renders the
``ValidationReport`` the core returns and offers the fix a check carries.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.library.recent import DAMAGED, MISSING, RecentFile, check_recent, recent_labels
from app.core.problem import Check, Fix
from app.core.session import CheckedModel, ModelSession
from app.ui.i18n import Retranslating
from app.ui.steps.model import model_actions as actions
from app.ui.steps.model.demo_row import DemoRow
from app.ui.steps.model.hash_row import HashRow
from app.ui.steps.model.local_models import LocalModels
from app.ui.widgets import look
from app.ui.widgets.check_list import CheckList
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.core.demo.fetch import DemoResult
    from app.core.hub.files import HubModel
    from app.ui.steps.model.get_model_dialog import GetModelDialog
    from app.ui.steps.model.get_model_row import GetModelRow
    from app.ui.steps.model.get_model_work import HubChoice

logger = logging.getLogger(__name__)


class ModelPanel(Retranslating, QWidget):
    """Signals: ``modelChosen(str path)`` as soon as a file is picked; ``modelChecked(CheckedModel)`` when
    its checks are back (info is None when the file could not be read at all);
    ``expectedHashChanged(str)`` when the user edits the expected SHA-256; ``hubSourceChanged(str)`` when the user
    chose where "Get a model" searches, ``hubProxyChanged(object)`` (str, or None: the system's) when the user set a
    usable proxy for it (the window saves both; the token is never passed on).

    The path and the checks live in the window's :class:`ModelSession`: opening a file starts a new session
    model there (the last model's plan and probe are forgotten)."""

    modelChosen = Signal(str)
    modelChecked = Signal(object)
    expectedHashChanged = Signal(str)
    hubSourceChanged = Signal(str)
    hubProxyChanged = Signal(object)

    def __init__(self, parent: QWidget | None = None, session: ModelSession | None = None) -> None:
        super().__init__(parent)
        self.session = session if session is not None else ModelSession()
        self.recent: list[str] = []
        self.recent_files: dict[str, RecentFile] = {}  # what the last check found, by path
        self._recent_unchecked = False  # the list changed since the last check
        self._task: Task | None = None
        self.demo_result: DemoResult | None = None  # the last one: says why the demo is the random fallback
        self.demo_options: dict = {}  # passed to core's demo fetcher (tests point pip at a local index)
        self.hub_source = "hf"  # where "Get a model" searches first (the window sets the saved choice)
        self.hub_proxy: str | None = None  # the proxy it goes through (None: the system's; the window sets the saved)
        self.hub_options: dict[str, Any] = {}  # "Get a model" options (tests: the fake Hub's endpoint)
        self.hub_choice: HubChoice | None = None  # the source and token chosen in "Get a model" (this session)
        self.get_dialog: GetModelDialog | None = None  # built on first use: the Hub's code loads only then
        self.get_row: GetModelRow | None = None  # the download row, built with the first download
        self.setAcceptDrops(True)
        self._build()
        self.retranslate()

    @property
    def path(self) -> str | None:
        """The file being shown (checked or still being checked)."""
        return self.session.path

    @property
    def report(self) -> CheckedModel | None:
        """Its checks; None while they run."""
        return self.session.checked

    def _build(self) -> None:
        self.open_button = QPushButton(self)
        look.bold(self.open_button)
        self.open_button.clicked.connect(self.choose_file)
        self.recent_button = QToolButton(self)
        self.recent_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        # the style's menu arrow overlapped the text (Chinese above all): no drawn arrow, a "▾" in the text instead
        self.recent_button.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0px; }")
        self.recent_menu = QMenu(self)
        self.recent_button.setMenu(self.recent_menu)
        self.recent_menu.aboutToShow.connect(self._check_recent)
        self.demo_button = QPushButton(self)
        self.demo_button.clicked.connect(self.make_demo)
        self.get_button = QPushButton(self)
        self.get_button.clicked.connect(self.get_model)
        self.demo_row = DemoRow(self)
        self.demo_row.ready.connect(self._on_demo_ready)
        self.demo_row.finished.connect(lambda: self.demo_button.setEnabled(True))
        self.demo_hint = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        look.hint(self.demo_hint)
        self.demo_hint.setWordWrap(True)
        self.summary = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.checks = CheckList(self)
        self.checks.fixRequested.connect(self.apply_fix)
        self.hash_row = HashRow(self)
        self.hash_row.hashed.connect(self._on_hashed)
        self.hash_row.expectedHashChanged.connect(self.expectedHashChanged)
        self.local_models = LocalModels(self)  # "On this computer": other apps' downloads, opened where they are
        self.local_models.openRequested.connect(self.open_model)
        self._layout()

    def _layout(self) -> None:
        top = QHBoxLayout()
        for widget in (self.open_button, self.recent_button):
            top.addWidget(widget)
        top.addStretch(1)
        fetch = QHBoxLayout()  # a second line: four buttons do not fit the column of a 1024-pixel window
        for widget in (self.get_button, self.demo_button):
            fetch.addWidget(widget)
        fetch.addStretch(1)
        self._get_slot = QVBoxLayout()  # the download row, once there is one
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addLayout(fetch)
        layout.addLayout(self._get_slot)
        layout.addWidget(self.demo_row)
        layout.addWidget(self.demo_hint)
        layout.addWidget(self.local_models)
        layout.addWidget(self.summary)
        layout.addWidget(self.checks)
        layout.addWidget(self.hash_row)

    # --- translation -----------------------------------------------------------------------------


    def retranslate(self) -> None:
        self.open_button.setText(self.tr("Open a GGUF model…"))
        self.recent_button.setText(self.tr("Recent") + " ▾")
        self.demo_button.setText(self.tr("Try the demo model"))
        self.get_button.setText(self.tr("Get a model…"))
        self.get_button.setToolTip(self.tr("Search Hugging Face (or its mirror) for a model that fits this computer "
                                           "and download it."))
        self._render_recent()
        self._render()

    def _render(self) -> None:
        if self.path is None:
            self.demo_hint.setText(actions.demo_intro_text())
        else:
            self.demo_hint.setText(actions.demo_hint_text(self.path, self.demo_result))
        self.demo_hint.setVisible(bool(self.demo_hint.text()))
        self.summary.setText(actions.summary_text(self.path, self.report))
        self.summary.setToolTip(actions.summary_tooltip(self.path, self.report))
        self.checks.set_checks(self.report.checks if self.report is not None else [])

    # --- choosing a model ------------------------------------------------------------------------

    def set_recent(self, paths: list[str]) -> None:
        """List ``paths`` at once by name (a shared name gets its folder), then check on a worker that each is still
        there and undamaged: a missing file is left out, a damaged one is marked (opening it shows what is wrong)."""
        self.recent = list(paths)
        self._render_recent()  # with what the last check found, until this one answers
        self._recent_unchecked = True
        if self.isVisible():  # at start-up it waits for the menu or the next list: the window's first paint first
            self._check_recent()

    def _check_recent(self) -> None:
        if not self._recent_unchecked or not self.recent:
            return
        self._recent_unchecked = False
        recent = list(self.recent)
        run_task(check_recent, recent, owner=self, on_done=lambda found: self._on_recent_checked(recent, found),
                 on_error=lambda error: logger.warning("the recent files could not be checked: %s", error))

    def _on_recent_checked(self, paths: list[str], found: list[RecentFile]) -> None:
        if paths == self.recent:  # not a list replaced since
            self.recent_files = {entry.path: entry for entry in found}
            self._render_recent()

    def _render_recent(self) -> None:
        self.recent_menu.clear()
        self.recent_menu.setToolTipsVisible(True)  # the full path (and a damaged file's problem)
        shown = [(path, label) for path, label in zip(self.recent, recent_labels(self.recent), strict=True)
                 if getattr(self.recent_files.get(path), "state", None) != MISSING]
        for path, label in shown:
            entry = self.recent_files.get(path)
            damaged = entry is not None and entry.state == DAMAGED
            problem = entry.problem if entry is not None and damaged else None
            action = self.recent_menu.addAction(self.tr("{name} (damaged)").format(name=label) if damaged else label)
            action.setToolTip(f"{path}\n{problem.render()}" if problem is not None else path)
            action.triggered.connect(lambda _=False, p=path: self.open_model(p))
        self.recent_button.setEnabled(bool(shown))

    def choose_file(self) -> None:
        start = actions.open_dialog_folder([p for p in (self.path, *self.recent) if p])
        from PySide6.QtWidgets import QFileDialog  # imported when used: faster start-up

        path, _ = QFileDialog.getOpenFileName(self, self.tr("Open a GGUF model"), start,
                                              self.tr("GGUF models (*.gguf);;All files (*)"))
        if path:
            self.open_model(path)

    def dragEnterEvent(self, event) -> None:
        if actions.dropped_path(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        path = actions.dropped_path(event.mimeData())
        if path is not None:
            event.acceptProposedAction()
            self.open_model(path)

    def open_model(self, path: str, expected_sha256: str | None = None) -> None:
        """Start checking ``path``; results arrive through ``modelChecked``."""
        if self._task is not None:
            self._task.cancel()
        self.session.open(path)
        engine = self.session.engine  # the live settings' engine: a projector beside the model is judged for it
        backend = engine[0] if engine is not None else None
        self.hash_row.set_path(path, expected_sha256, backend)
        self.modelChosen.emit(path)
        self._render()
        self.summary.setText(self.tr("Checking {name}…").format(name=Path(path).name))
        self._task = run_task(actions.validate_file, path, backend=backend,
                              on_done=self._on_validated, owner=self,
                              on_error=lambda error: self._on_validated(actions.report_from_error(path, error)))

    def _on_validated(self, report: CheckedModel) -> None:
        """The checks of a file (or one error row when it could not be checked at all)."""
        self._task = None
        if not self.session.set_checked(report):
            return  # an older file's answer arriving after the user picked another one
        self._render()
        self.modelChecked.emit(report)

    def make_demo(self) -> None:
        """Fetch the demo model once (progress and Cancel in the demo row), then open it like any model."""
        if self.demo_row.busy:
            return
        self.demo_button.setEnabled(False)
        self.demo_row.start(self.demo_options)

    def _on_demo_ready(self, result: DemoResult) -> None:
        self.demo_result = result
        self.open_model(str(result.path))

    # --- get a model from the Hub ----------------------------------------------------------------

    def get_model(self) -> None:
        """Show "Get a model" (built on first use: the Hub's code is imported then, never at start-up)."""
        from app.ui.steps.model.get_model_dialog import GetModelDialog
        from app.ui.steps.model.get_model_work import SOURCES, HubChoice

        if self.get_dialog is None:
            choice = self.hub_choice or HubChoice(self.hub_source if self.hub_source in SOURCES else SOURCES[0],
                                                  proxy=self.hub_proxy or None)
            engine = self.session.engine
            self.get_dialog = GetModelDialog(self, choice=choice, backend=engine[0] if engine is not None else None,
                                             options=self.hub_options)
            self.get_dialog.downloadRequested.connect(self.download_model)
            self.get_dialog.choiceChanged.connect(self._on_hub_choice)
        window = self.window()
        self.get_dialog.fit_to(window.width(), window.height())
        self.get_dialog.set_busy_elsewhere(self.get_row is not None and self.get_row.busy)
        self.get_dialog.show()
        self.get_dialog.raise_()
        self.get_dialog.activateWindow()

    def _on_hub_choice(self, choice: HubChoice) -> None:
        self.hub_choice = choice
        if choice.source != self.hub_source:
            self.hub_source = choice.source
            self.hubSourceChanged.emit(choice.source)
        if choice.proxy != self.hub_proxy:
            self.hub_proxy = choice.proxy
            self.hubProxyChanged.emit(choice.proxy)

    def download_model(self, model: HubModel, choice: HubChoice) -> None:
        """Download ``model`` in the download row (progress, Pause, Cancel); it opens here when it is verified."""
        if self.get_row is None:
            from app.ui.steps.model.get_model_row import GetModelRow

            self.get_row = GetModelRow(self)
            self._get_slot.addWidget(self.get_row)
            self.get_row.ready.connect(self.open_model)
            self.get_row.busyChanged.connect(self._on_download_busy)
        same_size = tuple(m.path for m in self.local_models.models if model.size is not None and m.size == model.size)
        self.get_row.start(model, choice, self.hub_options.get("folder"), same_size)

    def _on_download_busy(self, busy: bool) -> None:
        if self.get_dialog is not None:
            self.get_dialog.set_busy_elsewhere(busy)

    # --- fixes -----------------------------------------------------------------------------------

    def apply_fix(self, check: Check) -> None:
        action = check.action
        if action is None:
            return
        kind = action.kind
        if kind is Fix.COPY_TO_SAFE_PATH and self.path:
            self.summary.setText(self.tr("Copying the model to a folder with a plain path…"))
            self.checks.set_busy(True)
            run_task(actions.copy_to_safe_folder, self.path, action, on_done=self._on_copied,
                     on_error=self._on_copy_failed)
        elif kind is Fix.USE_FIRST_SHARD and action.get("path"):
            self.open_model(action.get("path"))

    def _on_copied(self, new_path: Path) -> None:
        self.checks.set_busy(False)
        self.open_model(str(new_path), self.hash_row.expected.text().strip() or None)

    def _on_copy_failed(self, error: BaseException) -> None:
        self.checks.set_busy(False)
        self.summary.setText(self.tr("Could not copy the model: {error}").format(error=actions.error_text(error)))

    # --- sha256 ----------------------------------------------------------------------------------

    def _on_hashed(self, model: CheckedModel) -> None:
        if self.session.set_checked(model):  # the same checks plus the hash row
            self._render()
            self.modelChecked.emit(model)
