"""One repository's GGUF models in "Get a model": name, size and a fit pill each ("Fits on the graphics card", "N of M
layers on the card", "Processor only", "Does not fit"), the best fit marked Recommended, and under the list the
chosen file's verdict with the numbers behind it (or its problem, in the app's one problem shape).

Values in (``set_listing``, ``set_fit``, ``set_fits``), a value out (``selectionChanged``); no Hub call here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.ui.i18n import Retranslating
from app.ui.steps.model import get_model_work as work
from app.ui.widgets import look
from app.ui.widgets.problem_view import ProblemView, render

if TYPE_CHECKING:
    from app.core.hub.files import HubModel, RepoListing
    from app.core.hub.fit import FileFit

NAME, QUANT, SIZE, FIT = range(4)


class Pill(QLabel):
    """A rounded label whose colours say the verdict."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.key = ""

    def show_as(self, key: str, text: str) -> None:
        if key != self.key:
            self.key = key
            self.setStyleSheet(work.pill_style(key))
        self.setText(text)


class FitCell(QWidget):
    """The Fit column of one row: the Recommended pill (the best fit only) and the verdict pill."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.best = Pill(self)
        self.verdict = Pill(self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(2, 1, 2, 1)
        layout.setSpacing(4)
        layout.addWidget(self.best)
        layout.addWidget(self.verdict)
        layout.addStretch(1)
        self.best.hide()

    def show_fit(self, fit: FileFit | None, waiting: str = "checking") -> None:
        """``fit`` None: ``waiting`` says why: "checking" (its verdict is coming), "unchecked" (its header was not
        needed to find the best fit), "unknown" (no verdict will come)."""
        if fit is None and waiting == "unknown":
            self.verdict.show_as("unknown", work.unknown_pill_text())
        elif fit is None and waiting == "unchecked":
            self.verdict.show_as("checking", work.unchecked_pill_text())
        else:
            self.verdict.show_as(fit.verdict.value if fit is not None else "checking", work.pill_text(fit))
        self.best.show_as("best", self.tr("Recommended"))
        self.best.setVisible(fit is not None and fit.best)


class ModelFiles(Retranslating, QWidget):
    """Signals: ``selectionChanged(object)``: the chosen HubModel, or None."""

    selectionChanged = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.listing: RepoListing | None = None
        self.fits: dict[str, FileFit] = {}
        self.cells: dict[str, FitCell] = {}
        self.waiting = "checking"  # what a file without a verdict waits for (FitCell.show_fit)
        self.pending: set[str] = set()  # files whose header is being read on their own (chosen by the user)
        self.file_problems = True  # a chosen file's problem is shown here (False: the dialog shows the one for all)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(4)
        self.tree.setRootIsDecorated(False)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long name keeps its end (the quantization)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(QUANT, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(SIZE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(FIT, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.verdict = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText,
                              textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem = ProblemView(self)
        self.problem.hide()
        self.projectors = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        look.hint(self.projectors)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.projectors)
        layout.addWidget(self.verdict)
        layout.addWidget(self.problem)
        self.retranslate()

    # --- values in --------------------------------------------------------------------------------

    def set_listing(self, listing: RepoListing | None) -> None:
        """Show ``listing``'s models (pills "Checking fit…" until their verdicts come); None: empty."""
        self.listing, self.fits, self.cells = listing, {}, {}
        self.file_problems = True
        self.pending = set()
        if self.waiting == "unchecked":
            self.waiting = "checking"
        self.tree.clear()
        for model in listing.models if listing is not None else ():
            item = QTreeWidgetItem(self.tree, [work.model_label(model), model.quant or "—", work.size_text(model.size),
                                               ""])
            item.setData(NAME, Qt.ItemDataRole.UserRole, model.name)
            item.setToolTip(NAME, model.name)
            item.setTextAlignment(SIZE, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            cell = FitCell(self.tree)
            cell.show_fit(None, self.waiting)
            self.tree.setItemWidget(item, FIT, cell)
            self.cells[model.name] = cell
        self._render_projectors()
        self._render_selection()

    def show_file_problems(self, shown: bool) -> None:
        self.file_problems = shown
        self._render_selection()

    def set_waiting(self, waiting: str) -> None:
        self.waiting = waiting
        self._render_cells()

    def set_pending(self, name: str, pending: bool) -> None:
        (self.pending.add if pending else self.pending.discard)(name)
        self._render_cells()

    def _waiting_for(self, name: str) -> str:
        return "checking" if name in self.pending else self.waiting

    def _render_cells(self) -> None:
        for name, cell in self.cells.items():
            cell.show_fit(self.fits.get(name), self._waiting_for(name))
        self._render_selection()

    def set_fit(self, fit: FileFit) -> None:
        """One verdict arrived."""
        self.fits[fit.name] = fit
        cell = self.cells.get(fit.name)
        if cell is not None:
            cell.show_fit(fit)
        selected = self.selected_model()
        if selected is not None and selected.name == fit.name:
            self._render_selection()

    def set_fits(self, fits: list[FileFit]) -> None:
        """Every verdict, the best marked: shown, and the best fit chosen."""
        for fit in fits:
            self.set_fit(fit)
        best = next((f for f in fits if f.best), None)
        if best is not None and self.selected_model() is None:
            self.select(best.name)
        self.tree.resizeColumnToContents(FIT)

    # --- selection --------------------------------------------------------------------------------

    def select(self, name: str) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is not None and item.data(NAME, Qt.ItemDataRole.UserRole) == name:
                self.tree.setCurrentItem(item)
                return

    def selected_model(self) -> HubModel | None:
        items = self.tree.selectedItems()
        if not items or self.listing is None:
            return None
        name = items[0].data(NAME, Qt.ItemDataRole.UserRole)
        return next((m for m in self.listing.models if m.name == name), None)

    def selected_fit(self) -> FileFit | None:
        model = self.selected_model()
        return self.fits.get(model.name) if model is not None else None

    def _on_selection(self) -> None:
        self._render_selection()
        self.selectionChanged.emit(self.selected_model())

    # --- texts ------------------------------------------------------------------------------------

    def retranslate(self) -> None:
        self.tree.setHeaderLabels([self.tr("File"), self.tr("Quantization"), self.tr("Size"),
                                   self.tr("Fit on this computer")])
        for name, cell in self.cells.items():
            cell.show_fit(self.fits.get(name), self._waiting_for(name))
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            model = self._model_named(item.data(NAME, Qt.ItemDataRole.UserRole)) if item is not None else None
            if item is not None and model is not None:
                item.setText(NAME, work.model_label(model))
        self._render_projectors()
        self._render_selection()

    def _model_named(self, name: str) -> HubModel | None:
        return next((m for m in self.listing.models if m.name == name), None) if self.listing is not None else None

    def _render_projectors(self) -> None:
        listing = self.listing
        text = ""
        if listing is not None and not listing.models:
            text = self.tr("This repository has no GGUF model files.")
        elif listing is not None and listing.projectors:
            text = self.tr("It also has a vision projector ({name}); Download fetches the model only.").format(
                name=listing.projectors[0].path)
        self.projectors.setText(text)
        self.projectors.setVisible(bool(text))

    def _render_selection(self) -> None:
        """The chosen file's verdict in words with its numbers, or its problem as sentence + next step."""
        model = self.selected_model()
        fit = self.fits.get(model.name) if model is not None else None
        problem = fit.problem if fit is not None and self.file_problems else None
        if model is None:
            text = ""
        elif model is not None and not model.complete:
            text = self.tr("Only {have} of its {count} parts are in the repository: it cannot be used.").format(
                have=len(model.parts), count=model.expected_parts)
        elif fit is None and self._waiting_for(model.name) != "checking":
            text = ""
        elif fit is None:
            text = self.tr("Reading its header (a few MB, not the file) to judge the fit…")
        elif fit.problem is None:
            text = render(fit.sentence())
        else:
            text = ""
        self.verdict.setText(text)
        self.verdict.setVisible(bool(text))
        self.problem.set_problem(problem)
        self.problem.setVisible(problem is not None)
