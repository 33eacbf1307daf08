""""On this computer": the GGUF files other apps already downloaded (Ollama, LM Studio, Jan, the Hugging Face cache,
llama.cpp's cache) and the folders the user added, found off the GUI thread by :mod:`app.core.library`.

Double-click a row or press Open: the file opens where it is, through the panel's usual open path (never copied).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.gguf.naming import file_type_text
from app.core.library.scan import LocalModel, find_local_models
from app.core.problem import Status
from app.core.text import human_bytes
from app.ui.i18n import Retranslating
from app.ui.widgets import look
from app.ui.widgets.collapsible import Collapsible
from app.ui.widgets.status_icon import status_icon
from app.ui.workers import Task, run_task

if TYPE_CHECKING:  # the list's classes (with their 20 enums) are made with the list, after the first paint
    from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

VISIBLE_ROWS = 5
PATH_ROLE = 256  # Qt.ItemDataRole.UserRole


class LocalModels(Retranslating, QWidget):
    """Signals: ``openRequested(str path)`` for the panel to open; ``foldersChanged(list)`` when the user added a
    folder (the window saves it in the settings).

    ``scan_options`` go to core's finder (tests pass ``env``/``home`` of a fake home); the first scan starts when
    the list is first shown."""

    openRequested = Signal(str)
    foldersChanged = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models: list[LocalModel] = []
        self.folders: list[str] = []
        self.scan_options: dict[str, Any] = {}
        self.scanned = False
        self._task: Task | None = None
        self._scan_after_paint = False  # shown, not painted yet: the first look waits for the paint
        self._build()
        self.retranslate()

    def _build(self) -> None:
        self._tree: QTreeWidget | None = None  # the list: made with the first look, or when first asked for (tree)
        self.status = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        look.hint(self.status)
        self.status.setWordWrap(True)
        self.open_button = QPushButton(self)
        self.open_button.clicked.connect(self.open_selected)
        self.refresh_button = QPushButton(self)
        self.refresh_button.clicked.connect(self.refresh)
        self.add_button = QPushButton(self)
        self.add_button.clicked.connect(self.choose_folder)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for button in (self.open_button, self.refresh_button, self.add_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        content = QWidget(self)
        self._inner = QVBoxLayout(content)
        self._inner.setContentsMargins(0, 0, 0, 0)
        self._inner.addWidget(self.status)
        self._inner.addLayout(buttons)
        self.section = Collapsible("", content, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.section)
        self._update_buttons()

    @property
    def tree(self) -> QTreeWidget:
        """The list of models, above the status line. Its section is folded while the window opens, so the list is
        made with the first look (after the window's first paint) or when first asked for, not before."""
        return self._ensure_tree()

    def _ensure_tree(self) -> QTreeWidget:
        if self._tree is None:
            self._tree = self._make_tree()
            self._inner.insertWidget(0, self._tree)
            self._fit_height()
            self._tree.setHeaderLabels(self._headers())
        return self._tree

    def _make_tree(self) -> QTreeWidget:
        from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeWidget

        tree = QTreeWidget(self)
        tree.setColumnCount(5)
        tree.setRootIsDecorated(False)
        tree.setAlternatingRowColors(True)
        tree.setUniformRowHeights(True)
        tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, 5):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        tree.itemDoubleClicked.connect(lambda item, _column: self._open_item(item))
        tree.itemSelectionChanged.connect(self._update_buttons)
        return tree

    # --- translation -----------------------------------------------------------------------------

    def _headers(self) -> list[str]:
        return [self.tr("Model"), self.tr("Size"), self.tr("Type"), self.tr("From"), self.tr("Checks")]

    def retranslate(self) -> None:
        if self._tree is not None:
            self._tree.setHeaderLabels(self._headers())
        self.open_button.setText(self.tr("Open"))
        self.refresh_button.setText(self.tr("Look again"))
        self.add_button.setText(self.tr("Add a folder…"))
        self._render()

    def _title(self) -> str:
        if self._task is not None:
            return self.tr("On this computer (looking…)")
        if not self.scanned:
            return self.tr("On this computer")
        return self.tr("On this computer ({count})").format(count=len(self.models))

    def _render(self) -> None:
        self.section.set_title(self._title())
        if self._tree is not None or self.models:
            self._render_rows(self.selected_path())
        if self._task is not None:
            self.status.setText(self.tr("Looking for models other apps downloaded…"))
        elif self.scanned and not self.models:
            self.status.setText(self.tr("No models found from Ollama, LM Studio, Jan, the Hugging Face cache or "
                                        "llama.cpp. Add a folder where you keep models."))
        else:
            self.status.setText(self.tr("Opened where they are, never copied. Full checks run when you open one."))
        self._update_buttons()

    def _render_rows(self, selected: str | None) -> None:
        from PySide6.QtWidgets import QTreeWidgetItem

        tree = self.tree
        tree.clear()
        for model in self.models:
            file_type = file_type_text(model.quant)
            item = QTreeWidgetItem([model.name, human_bytes(model.size), file_type.render() if file_type else "?",
                                    model.app_name.render(), self._checks_text(model)])
            item.setData(0, PATH_ROLE, model.path)
            item.setToolTip(0, model.path)
            if model.status is not None:
                item.setIcon(4, status_icon(model.status.value))
            if model.message is not None:
                item.setToolTip(4, model.message.render())
            tree.addTopLevelItem(item)
            if model.path == selected:
                item.setSelected(True)

    def _checks_text(self, model: LocalModel) -> str:
        if model.status is Status.ERROR:
            return self.tr("did not pass")
        if model.status is None:
            return ""
        return self.tr("passed")

    def _fit_height(self) -> None:
        row = self.tree.fontMetrics().height() + 6
        self.tree.setMaximumHeight(self.tree.header().sizeHint().height() + row * VISIBLE_ROWS + 4)

    # --- finding ---------------------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self.scanned and self._task is None:
            self._scan_after_paint = True
            self.update()

    def paintEvent(self, event) -> None:
        """The first look starts once the list has been painted (with the window's first paint, when the window
        opens): a worker started before that paint would compete with it for the processor."""
        super().paintEvent(event)
        if self._scan_after_paint:
            self._scan_after_paint = False
            QTimer.singleShot(0, self._first_scan)  # after the window's start-up has set the folders

    def _first_scan(self) -> None:
        if not self.scanned and self._task is None:
            self.refresh()

    def set_folders(self, folders: list[str]) -> None:
        changed = list(folders) != self.folders
        self.folders = list(folders)
        if changed and (self.scanned or self._task is not None):
            self.refresh()

    def refresh(self) -> None:
        """Look again (off the GUI thread); an older look still running is cancelled."""
        self._ensure_tree()  # the list exists from the first look on, whether it finds models or not
        if self._task is not None:
            self._task.cancel()
        options = dict(self.scan_options)
        options["extra_folders"] = [*options.get("extra_folders", ()), *self.folders]
        task = run_task(find_local_models, owner=self, wants_cancel=True,
                        on_done=lambda models: self._on_found(task, models),
                        on_error=lambda _error: self._on_found(task, []), **options)
        self._task = task
        self._render()

    def _on_found(self, task: Task, models: list[LocalModel]) -> None:
        if task is not self._task:
            return  # an older look, replaced by a newer one
        self._task = None
        self.scanned = True
        self.models = list(models)
        self._render()

    def busy(self) -> bool:
        return self._task is not None

    # --- opening and folders ---------------------------------------------------------------------

    def selected_path(self) -> str | None:
        tree = getattr(self, "_tree", None)  # None also while it is being built
        items = tree.selectedItems() if tree is not None else []
        return items[0].data(0, PATH_ROLE) if items else None

    def _update_buttons(self) -> None:
        self.open_button.setEnabled(self.selected_path() is not None)

    def _open_item(self, item: QTreeWidgetItem) -> None:
        path = item.data(0, PATH_ROLE)
        if path:
            self.openRequested.emit(path)

    def open_selected(self) -> None:
        path = self.selected_path()
        if path:
            self.openRequested.emit(path)

    def choose_folder(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # imported when used: faster start-up

        folder = QFileDialog.getExistingDirectory(self, self.tr("Add a folder with models"))
        if folder:
            self.add_folder(folder)

    def add_folder(self, folder: str) -> None:
        if folder in self.folders:
            return
        self.folders = [*self.folders, folder]
        self.foldersChanged.emit(list(self.folders))
        self.refresh()
