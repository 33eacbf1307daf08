""""Get a model": search the Hub (or its mirror) for GGUF repositories, or pick one of a few suggested small models;
see a repository's files with a fit pill each (the best fit marked Recommended); Download hands the chosen file to
the Model step, whose download row fetches it and then opens it like any model.

Every Hub call runs in a worker (app.ui.workers); an answer for a search or repository the user has since left is
dropped. Failures are core's HubError sentences, shown in the app's one problem shape. The token stays in memory
for this session only and is never logged (its field shows dots). A proxy of the user's own (empty: the system's)
carries every request; an address core cannot use is its sentence before anything is sent, and a saved one's password
is shown as dots (the real value is kept and used).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.problem import UserError
from app.ui.i18n import Retranslating
from app.ui.steps.model import get_model_work as work
from app.ui.steps.model.get_model_files import ModelFiles
from app.ui.widgets import look
from app.ui.widgets.problem_view import ProblemView, render
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.core.hub.client import RepoHit
    from app.core.hub.files import HubModel, RepoListing
    from app.core.hub.fit import FileFit

logger = logging.getLogger(__name__)
REPO_ROLE = 256  # Qt.ItemDataRole.UserRole
MAX_SIZE = (960, 640)  # inside a 1024 x 700 screen with the window's frame


class GetModelDialog(Retranslating, QDialog):
    """Signals: ``downloadRequested(HubModel, HubChoice)`` when the user presses Download (the dialog then closes);
    ``choiceChanged(HubChoice)`` when the source, token or proxy changed (its proxy: the last usable one).

    ``options`` (tests): ``endpoint`` (a Hub-compatible server instead of the source's address), ``vram_budget``
    (judge as if one card had that much free memory)."""

    downloadRequested = Signal(object, object)
    choiceChanged = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, choice: work.HubChoice | None = None,
                 backend: str | None = None, options: dict[str, Any] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("GetModelDialog")
        self.options = dict(options or {})
        self._backend = backend
        self.machine: tuple[Any, str] | None = None  # (HardwareReport, engine) once scanned
        self.suggested: str | None = None  # the curated repository that suits this computer
        self.hits: list[RepoHit] | None = None  # the last search's answer; None: the suggested list is shown
        self.query = ""
        self.repo: str | None = None  # the repository whose files are shown (or being listed)
        self.listing: RepoListing | None = None
        self.fits: list[FileFit] | None = None  # every verdict, once all are back
        self.error: UserError | None = None  # the last failure shown
        self.busy_elsewhere = False  # a download is under way in the Model step
        self._retry: Any = None  # what "Use the mirror" repeats
        self._tasks: dict[str, Task] = {}
        self._build(choice or work.HubChoice())
        self.retranslate()
        self._show_curated()
        self._scan_machine()
        run_task(work.load_hub_client, owner=self,
                 on_error=lambda error: logger.info("the Hub client was not loaded ahead: %s", error))

    # --- building ---------------------------------------------------------------------------------

    def _build(self, choice: work.HubChoice) -> None:
        self.source_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.source = QComboBox(self)
        for value in work.SOURCES:
            self.source.addItem("", value)
        self.source.setCurrentIndex(max(0, work.SOURCES.index(choice.source)) if choice.source in work.SOURCES else 0)
        self.source.currentIndexChanged.connect(lambda _i: self._choice_changed())
        self.token_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.token = QLineEdit(self)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setText(choice.token or "")
        self.token.editingFinished.connect(self._choice_changed)
        self.proxy_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.proxy = QLineEdit(self)
        self.proxy.setObjectName("HubProxy")
        self.proxy_saved = choice.proxy or None  # the last usable address (the field may show it masked)
        self.proxy_error: UserError | None = None  # core's sentence for the field's address, while shown
        self.proxy.setText(work.masked_proxy(self.proxy_saved))
        self.proxy.editingFinished.connect(self._on_proxy_edited)
        self.search_box = QLineEdit(self)
        self.search_box.setClearButtonEnabled(True)
        self.search_box.returnPressed.connect(self.search)
        self.search_button = QPushButton(self)
        self.search_button.clicked.connect(self.search)
        self.list_title = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        look.bold(self.list_title)
        self.repos = QTreeWidget(self)
        self.repos.setColumnCount(2)
        self.repos.setRootIsDecorated(False)
        self.repos.setHeaderHidden(True)
        self.repos.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.repos.header().setStretchLastSection(False)
        self.repos.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.repos.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.repos.itemSelectionChanged.connect(self._on_repo_chosen)
        self.list_note = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)  # the chosen entry's note
        look.hint(self.list_note)
        self.files = ModelFiles(self)
        self.files.selectionChanged.connect(self._on_file_chosen)
        self.files_title = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        look.bold(self.files_title)
        self.status = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        look.hint(self.status)
        self.problem = ProblemView(self)
        self.problem.hide()
        self.mirror_button = QPushButton(self)
        self.mirror_button.clicked.connect(self.use_mirror)
        self.mirror_button.hide()
        self.download_button = QPushButton(self)
        self.download_button.setDefault(False)
        self.download_button.setAutoDefault(False)
        self.download_button.clicked.connect(self.request_download)
        self.close_button = QPushButton(self)
        self.close_button.setAutoDefault(False)
        self.close_button.clicked.connect(self.close)
        self._layout()

    def _layout(self) -> None:
        where = QGridLayout()  # Source [combo]  Token [field] / Proxy [field under both]
        where.addWidget(self.source_label, 0, 0)
        where.addWidget(self.source, 0, 1)
        where.addWidget(self.token_label, 0, 2)
        where.addWidget(self.token, 0, 3)
        where.addWidget(self.proxy_label, 1, 0)
        where.addWidget(self.proxy, 1, 1, 1, 3)
        where.setColumnStretch(3, 1)
        self.token_label.setContentsMargins(12, 0, 0, 0)  # apart from the source's box
        find = QHBoxLayout()
        find.addWidget(self.search_box, 1)
        find.addWidget(self.search_button)
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.list_title)
        left_layout.addWidget(self.repos, 1)
        left_layout.addWidget(self.list_note)
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.files_title)
        right_layout.addWidget(self.files, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        buttons = QHBoxLayout()
        buttons.addWidget(self.mirror_button)
        buttons.addStretch(1)
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(where)
        layout.addLayout(find)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.problem)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.resize(*MAX_SIZE)

    def fit_to(self, width: int, height: int) -> None:
        """At most MAX_SIZE and within ``width`` x ``height`` (the window the dialog belongs to)."""
        self.resize(min(MAX_SIZE[0], max(480, width - 40)), min(MAX_SIZE[1], max(400, height - 40)))
        layout = self.layout()
        if layout is not None:
            layout.activate()  # the splitter takes its width from the new size now
        inner = self.splitter.width()
        self.splitter.setSizes([inner * 3 // 8, inner - inner * 3 // 8])  # the files and their pills need more

    # --- the choice of source and token -----------------------------------------------------------

    def choice(self) -> work.HubChoice:
        return work.HubChoice(self.source.currentData() or work.SOURCES[0], self.token.text().strip() or None,
                              self.options.get("endpoint"), self.proxy_value())

    def proxy_value(self) -> str | None:
        """The proxy the field stands for (its masked password is the saved one's); None: the system's."""
        return work.unmasked_proxy(self.proxy.text().strip(), self.proxy_saved) or None

    def _choice_changed(self) -> None:
        self.choiceChanged.emit(replace(self.choice(), proxy=self.proxy_saved))

    def _on_proxy_edited(self) -> None:
        """A usable address (or none) becomes the choice, shown masked; another is core's sentence, not saved."""
        if self.proxy_usable():
            value = self.proxy_value()
            self.proxy.setText(work.masked_proxy(value))
            if value != self.proxy_saved:
                self.proxy_saved = value
                self._choice_changed()

    def proxy_usable(self) -> bool:
        """Whether the field's proxy can carry a request; if not, core's sentence is shown (and nothing is sent)."""
        error = work.proxy_problem(self.proxy_value())
        if error is not None:
            self._say("")
            self.proxy_error = error
            self._show_problem(error)
            return False
        if self.proxy_error is not None and self.error is self.proxy_error:
            self._show_problem(None)
        self.proxy_error = None
        return True

    def use_mirror(self) -> None:
        """Switch to hf-mirror.com and repeat what failed (the search, or the repository's list)."""
        self.source.setCurrentIndex(work.SOURCES.index("hf-mirror"))
        retry, self._retry = self._retry, None
        if retry is not None:
            retry()

    # --- searching --------------------------------------------------------------------------------

    def search(self) -> None:
        """Search for the box's text; an empty box shows the suggested models again."""
        text = self.search_box.text().strip()
        if not text:
            self._show_curated()
            return
        if not self.proxy_usable():
            return
        self.query, self.hits = text, []
        self._clear_repo()
        self._render_list()
        self._say(self.tr("Searching for “{text}”…").format(text=text))
        self._retry = self.search
        self._start("search", work.search_repos, text, self.choice(),
                    on_done=lambda found: self._on_found(text, found), on_error=self._on_failed)

    def _on_found(self, text: str, found: work.Found) -> None:
        if text != self.query or self.hits is None:
            return  # an older search, or the user went back to the suggested list
        self.hits = list(found.hits)
        self._render_list()
        if not found.hits:
            self._say(self.tr("No GGUF repository matches “{text}”. Try fewer or other words, e.g. a model family "
                              "such as qwen or llama.").format(text=text))
            return
        self._say("")
        if found.listing is not None:
            self._select_repo(found.listing.repo)

    def _show_curated(self) -> None:
        self._cancel("search")
        self.hits, self.query = None, ""
        self._render_list()
        self._say("")

    def _render_list(self) -> None:
        """The suggested models, or the search's repositories (the chosen one kept chosen)."""
        from app.core.hub.curated import CURATED

        self.repos.blockSignals(True)
        self.repos.clear()
        if self.hits is None:
            self.list_title.setText(self.tr("Suggested small models"))
            for entry in CURATED:
                size = work.size_text(entry.approx_bytes)
                title = f"★ {entry.title}" if entry.repo == self.suggested else entry.title
                item = QTreeWidgetItem(self.repos, [title, f"≈ {size}"])
                item.setData(0, REPO_ROLE, entry.repo)
                item.setToolTip(0, f"{entry.repo}\n{render(entry.note)}")
                if entry.repo == self.suggested:
                    _bold(item)
        else:
            self.list_title.setText(self.tr("Results for “{text}”").format(text=self.query))
            for hit in self.hits:
                item = QTreeWidgetItem(self.repos, [hit.repo, work.downloads_text(hit)])
                item.setData(0, REPO_ROLE, hit.repo)
                item.setToolTip(0, hit.repo)
        for i in range(self.repos.topLevelItemCount()):
            item = self.repos.topLevelItem(i)
            if item is not None and item.data(0, REPO_ROLE) == self.repo:
                self.repos.setCurrentItem(item)
        self.repos.blockSignals(False)
        self._render_note()

    def _render_note(self) -> None:
        """Under the suggested list: the chosen entry's note (its quantization and what it is good for), else
        which entry is marked ★ and why."""
        from app.core.hub.curated import CURATED

        text = ""
        if self.hits is None:
            chosen = next((e for e in CURATED if e.repo == self.repo), None)
            suggested = next((e for e in CURATED if e.repo == self.suggested), None)
            if chosen is not None:
                text = f"{chosen.title} ({chosen.params}, {chosen.quant}): {render(chosen.note)}"
            elif suggested is not None:
                text = self.tr("★ {title}: the suggested size for this computer's memory. Pick a model to see "
                               "each file's fit.").format(title=suggested.title)
            else:
                text = self.tr("Pick a model to see each file's fit on this computer.")
        self.list_note.setText(text)
        self.list_note.setVisible(bool(text))

    # --- a repository's files ---------------------------------------------------------------------

    def _select_repo(self, repo: str) -> None:
        for i in range(self.repos.topLevelItemCount()):
            item = self.repos.topLevelItem(i)
            if item is not None and item.data(0, REPO_ROLE) == repo:
                self.repos.setCurrentItem(item)
                return

    def _on_repo_chosen(self) -> None:
        items = self.repos.selectedItems()
        repo = items[0].data(0, REPO_ROLE) if items else None
        if repo and repo != self.repo:
            self.open_repo(repo)

    def open_repo(self, repo: str) -> None:
        """List ``repo``'s files, then judge each against this computer."""
        if not self.proxy_usable():
            return
        self._clear_repo()
        self.repo = repo
        self.files_title.setText(repo)
        self._render_note()
        self._say(self.tr("Listing the files of {repo}…").format(repo=repo))
        self._retry = lambda: self.open_repo(repo)
        self._start("list", work.list_repo, repo, self.choice(),
                    on_done=lambda listing: self._on_listed(repo, listing), on_error=self._on_failed)

    def _clear_repo(self) -> None:
        self._cancel("list")
        self._cancel("fit")
        self._cancel("one")
        self.repo, self.listing, self.fits = None, None, None
        self.files_title.setText(self.tr("Files"))
        self.files.set_listing(None)
        self._show_problem(None)
        self._render_buttons()

    def _on_listed(self, repo: str, listing: RepoListing) -> None:
        if repo != self.repo:
            return
        self.listing = listing
        self.files.set_listing(listing)
        self._render_buttons()
        if listing.models:
            self._judge()
        else:
            self._say("")

    def _judge(self) -> None:
        """Read each model's header and judge it, once the machine is known."""
        listing, machine = self.listing, self.machine
        if listing is None or machine is None:
            return  # the scan's answer starts it
        if "fit" in self._tasks:
            return
        self._say(self.tr("Reading each file's header (a few MB, not the file) to judge the fit…"))
        repo = listing.repo
        self._start("fit", work.fit_models, listing, self.choice(), machine,
                    vram_budget=self.options.get("vram_budget"), wants_progress=True, wants_cancel=True,
                    on_progress=lambda fit: self._on_fit(repo, fit),
                    on_done=lambda fits: self._on_fits(repo, fits), on_error=self._on_failed)

    def _on_fit(self, repo: str, fit: FileFit) -> None:
        if self.listing is not None and repo == self.listing.repo:
            self.files.set_fit(fit)
            self._render_buttons()

    def _on_fits(self, repo: str, fits: list[FileFit]) -> None:
        if self.listing is None or repo != self.listing.repo:
            return
        self.fits = fits
        self.files.set_fits(fits)
        judged = [f for f in fits if f.problem is None]
        unread = len(self.listing.models) - len(fits)
        if unread > 0:
            self.files.set_waiting("unchecked")
        if not judged:
            self._say("")  # the problem below says why
        elif not any(f.best for f in fits) and len(judged) == len(fits):  # (a search read the smallest file: a
            # larger one cannot do better)
            self._say(self.tr("No file here fits this computer with a useful context; a smaller model would."))
        elif unread > 0:
            self._say(self.tr("Read the headers of {n} of {m} files ({size}) to find the best fit; choose another "
                              "file to read its header too.").format(
                n=len(fits), m=len(self.listing.models), size=work.size_text(sum(f.header_bytes for f in fits))))
        else:
            self._say("")
        if fits and not judged:  # e.g. a gated repository: every header read was refused, for one reason
            self.files.show_file_problems(False)
            self._show_problem(fits[0].problem)
        self._render_buttons()

    def _on_file_chosen(self, model: HubModel | None) -> None:
        """A file the search for the best fit did not read: read its header now."""
        self._render_buttons()
        listing, machine = self.listing, self.machine
        if model is None or listing is None or machine is None or self.fits is None:
            return
        if model.name in self.files.fits or model.name in self.files.pending or not model.complete:
            return
        for name in list(self.files.pending):
            self.files.set_pending(name, False)
        self.files.set_pending(model.name, True)
        self._start("one", work.fit_one, model, self.choice(), machine, vram_budget=self.options.get("vram_budget"),
                    on_done=lambda fit: self._on_one(listing.repo, fit), on_error=self._on_failed)

    def _on_one(self, repo: str, fit: FileFit) -> None:
        from app.core.hub.fit import mark_best

        if self.listing is None or repo != self.listing.repo:
            return
        self.files.set_pending(fit.name, False)
        others = [f for name, f in self.files.fits.items() if name != fit.name]
        self.fits = mark_best([*others, fit])
        self.files.set_fits(self.fits)
        self._render_buttons()

    # --- the machine ------------------------------------------------------------------------------

    def _scan_machine(self) -> None:
        self._start("machine", work.scan_machine, self._backend, on_done=self._on_machine,
                    on_error=self._on_machine_failed)

    def _on_machine_failed(self, error: BaseException) -> None:
        from app.core.problem import error_detail
        from app.core.text import T

        logger.warning("no fit verdicts: the machine scan failed: %s", error)
        self.files.set_waiting("unknown")
        self._show_problem(UserError(
            T("This computer's memory could not be read, so no file gets a fit verdict ({error}).",
              "无法读取这台电脑的内存，因此无法判断各文件是否放得下（{error}）。", error=error_detail(error)),
            T("The files can still be downloaded; the Model step checks a model once it is opened.",
              "仍然可以下载这些文件；模型打开后，“模型”步骤会检查它。")))

    def _on_machine(self, machine: tuple[Any, str]) -> None:
        self.machine = machine
        self.suggested = work.suggested_repo(machine[0])
        if self.hits is None:
            self._render_list()
        self._judge()

    # --- downloading ------------------------------------------------------------------------------

    def set_busy_elsewhere(self, busy: bool) -> None:
        """A download is under way in the Model step: one at a time."""
        self.busy_elsewhere = busy
        self._render_buttons()

    def request_download(self) -> None:
        model = self.files.selected_model()
        if model is None or not self._can_download(model) or not self.proxy_usable():
            return
        self.downloadRequested.emit(model, self.choice())
        self.close()

    def _can_download(self, model: HubModel) -> bool:
        from app.core.hub.fit import FitVerdict

        fit = self.files.fits.get(model.name)
        return model.complete and not self.busy_elsewhere and (fit is None or fit.verdict
                                                               is not FitVerdict.DOES_NOT_FIT)

    def _render_buttons(self) -> None:
        model = self.files.selected_model()
        self.download_button.setEnabled(model is not None and self._can_download(model))
        self.download_button.setToolTip(self.tr("A download is under way in the Model step; one at a time.")
                                        if self.busy_elsewhere else "")

    # --- problems and status ----------------------------------------------------------------------

    def _on_failed(self, error: BaseException) -> None:
        if not isinstance(error, UserError):
            logger.error("Get a model: unexpected failure", exc_info=error)
        self._say("")
        self._show_problem(error if isinstance(error, UserError) else _generic(error))

    def _show_problem(self, error: UserError | None) -> None:
        self.error = error
        self.problem.set_problem(error)
        self.problem.setVisible(error is not None)
        self.mirror_button.setVisible(error is not None and _unreachable(error) and self.choice().source == "hf"
                                      and self._retry is not None and error is not self.proxy_error)
        if error is not None and _gated(error):
            self.token.setFocus()

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    # --- tasks ------------------------------------------------------------------------------------

    def _start(self, name: str, fn, *args: Any, on_done, on_error, **kwargs: Any) -> None:
        """Run ``fn`` as the one ``name`` task; the answer of a task replaced or cancelled since is dropped. A Hub
        request is not sent through a proxy address that cannot be used (its sentence is shown instead)."""
        if name != "machine" and not self.proxy_usable():
            return
        self._cancel(name)
        current: list[Task] = []

        def finish(callback, value) -> None:
            if current and self._tasks.get(name) is current[0]:
                del self._tasks[name]
                callback(value)

        task = run_task(fn, *args, owner=self, on_error=lambda error: finish(on_error, error),
                        on_done=lambda value: finish(on_done, value), **kwargs)
        current.append(task)
        self._tasks[name] = task

    def _cancel(self, name: str) -> None:
        task = self._tasks.pop(name, None)
        if task is not None:
            task.cancel()

    def closeEvent(self, event) -> None:
        for name in list(self._tasks):
            if name != "machine":
                self._cancel(name)
        super().closeEvent(event)

    # --- translation ------------------------------------------------------------------------------

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Get a model"))
        self.source_label.setText(self.tr("Source:"))
        for i, text in enumerate((self.tr("Hugging Face"), self.tr("hf-mirror.com (mirror)"),
                                  self.tr("ModelScope"))):
            self.source.setItemText(i, text)
        self.token_label.setText(self.tr("Token:"))
        self.token.setPlaceholderText(self.tr("for gated models (optional; kept until the app closes)"))
        self.token.setToolTip(self.tr("Sent only to the source chosen here, never saved."))
        self.proxy_label.setText(self.tr("Proxy:"))
        self.proxy.setPlaceholderText(self.tr("http://host:port — empty: the system's setting"))
        self.proxy.setToolTip(self.tr("Every search, header read and download goes through this proxy; it is saved "
                                      "for next time. Use it where the system's proxy is not picked up."))
        self.search_box.setPlaceholderText(self.tr("Search models, e.g. qwen 7b instruct, or owner/name"))
        self.search_button.setText(self.tr("Search"))
        self.mirror_button.setText(self.tr("Use the mirror hf-mirror.com"))
        self.download_button.setText(self.tr("Download"))
        self.close_button.setText(self.tr("Close"))
        if self.repo is None:
            self.files_title.setText(self.tr("Files"))
        self._render_list()
        self._show_problem(self.error)
        self._render_buttons()


def _bold(item: QTreeWidgetItem) -> None:
    font = item.font(0)
    font.setBold(True)
    item.setFont(0, font)


def _generic(error: BaseException) -> UserError:
    from app.core.problem import error_detail
    from app.core.text import T

    return UserError(T("The request failed: {error}", "请求失败：{error}", error=error_detail(error)),
                     T("Try again, or choose another source.", "请重试，或选择其他来源。"))


def _kind(error: UserError) -> str | None:
    kind = getattr(error, "kind", None)
    return str(kind) if kind is not None else None


def _unreachable(error: UserError) -> bool:
    return _kind(error) == "unreachable"


def _gated(error: UserError) -> bool:
    return _kind(error) == "gated"
