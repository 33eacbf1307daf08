"""Step 1, Machine: RAM and each GPU's VRAM as live bars, who else holds GPU memory, driver/CUDA, notes.

The full scan (``hardware.scan_hardware``) runs once in a worker; afterwards a 1 s timer samples RAM
and GPUs (``hardware.read_gpus`` + psutil) in a worker too, never on the GUI thread.

One row says whether the chosen engine's CPU kernels run on this processor: the engine self-test's cached result
for this engine build and processor, or, when there is none, the self-test itself (a few seconds, in a worker).
The row is a Check like every other; its button rebuilds the engine or switches to the other one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.core.problem import Check, Fix, Status
from app.core.text import Text, human_bytes
from app.ui.i18n import Retranslating
from app.ui.steps.machine.engine_rebuild import (
    REBUILT_ENGINE,
    cannot_rebuild_reason,
    other_engine,
)
from app.ui.steps.machine.gpu_cards import GpuCards
from app.ui.steps.machine.gpu_notice import GpuEngineNotice
from app.ui.steps.machine.rebuild_box import RebuildBox
from app.ui.steps.machine.worker_devices import WorkerDevices
from app.ui.widgets import look
from app.ui.widgets.check_list import CheckList
from app.ui.widgets.memory_bar import MemoryBar, Segment
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.core.engine.selftest import EngineCheck
    from app.core.hardware.gpu import GpuInfo
    from app.core.hardware.report import HardwareReport
    from app.core.launch.gpu_engine import GpuEngineWarning
    from app.ui.steps.machine.engine_rebuild import EngineRebuild
    from app.ui.steps.machine.gpu_fetch_box import GpuFetchBox

REFRESH_MS = 1000


@dataclass
class LiveSample:
    ram_total: int
    ram_available: int
    gpus: list[GpuInfo] = field(default_factory=list)


def scan() -> HardwareReport:  # worker thread
    from app.core.hardware import scan as hardware

    return hardware.scan_hardware()


def sample() -> LiveSample:  # worker thread
    from app.core.hardware import scan as hardware

    memory = hardware.read_memory()  # capped by a container's memory limit, like the plan's RAM budget
    return LiveSample(memory.total_bytes, memory.usable_bytes, hardware.read_gpus())


@dataclass
class EngineLookup:
    """What the engine row shows: the self-test result (None: not tested yet) and its Check row."""

    engine: str
    path: str | None
    result: EngineCheck | None
    row: Check | None  # None: nothing cached, the test is still to run
    cannot_rebuild: Text | None = None  # why the engine cannot be rebuilt here


def look_up_engine(engine: str, server_bin: str | None, *, run: bool = False,
                   result: EngineCheck | None = None) -> EngineLookup:
    """Worker thread: the cached self-test of this engine build on this processor, or (``run``) the self-test
    itself, or the row for a ``result`` already in hand (a rebuild's). Raises UserError when the engine is missing."""
    from app.core.engine import report, selftest
    from app.core.server.engine_check import run_check

    path = server_bin
    if engine != REBUILT_ENGINE:
        from app.core.launch.discovery import find_llama_server

        path = str(find_llama_server(server_bin))
    if result is None:
        result = run_check(engine, path) if run else selftest.cached(engine, path)
    if result is None:
        return EngineLookup(engine, path, None, None)
    return EngineLookup(engine, path, result, report.check_row(result, engine, path), cannot_rebuild_reason())


def untested_row(engine: str, server_bin: str | None, error: BaseException) -> Check:
    """Worker thread: the self-test could not run at all; say "not tested yet" with its button, and why."""
    from app.core.engine import report

    row = report.check_row(None, engine, server_bin)
    return replace(row, evidence=(str(error),))


class MachinePanel(Retranslating, QWidget):
    """Emits ``hardwareScanned(report)`` once the full scan is done (the plan needs it).

    The engine row asks its owner for its fixes: ``rebuildRequested()`` (rebuild the built-in engine) and
    ``switchEngineRequested(engine)`` (choose the other engine in Settings)."""

    hardwareScanned = Signal(object)
    rebuildRequested = Signal()
    switchEngineRequested = Signal(str)
    useServerRequested = Signal(str)  # the GPU notice's "use this llama-server": the file to choose in Settings

    def __init__(self, parent: QWidget | None = None, *, live: bool = True) -> None:
        super().__init__(parent)
        self.report: HardwareReport | None = None
        self.last_sample: LiveSample | None = None
        self.own_pids: set[int] = set()
        self._sampling = False
        self.summary = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.engine: tuple[str, str | None] | None = None  # (backend, server_bin) the Settings step chose
        self.engine_state = "idle"  # idle | looking | testing | done
        self.engine_lookup: EngineLookup | None = None
        self.engine_row: Check | None = None  # the row shown
        self._engine_task: Task | None = None
        self._engine_missing = False
        self._pending_rebuilt: EngineCheck | None = None  # a rebuild's EngineCheck that arrived during a look-up
        self.engine_checks = CheckList(self, fold_passed=False)
        self.engine_checks.fixRequested.connect(self._on_engine_fix)
        self.engine_checks.hide()
        self.engine_status = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.engine_status.setWordWrap(True)
        look.hint(self.engine_status)
        self.engine_status.hide()
        self.engine_note = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.engine_note.setWordWrap(True)
        look.hint(self.engine_note)
        self.engine_note.hide()
        self.rebuild_box = RebuildBox(self)
        self.rebuild_box.hide()
        self.gpu_notice = GpuEngineNotice(self)  # an NVIDIA GPU, but an engine without GPU support
        self.gpu_notice.useServerRequested.connect(self.useServerRequested)
        self.gpu_notice.warningChanged.connect(self._on_gpu_warning)
        self.gpu_warning: GpuEngineWarning | None = None
        self.gpu_fetch: GpuFetchBox | None = None  # "get the GPU engine for this card": built after the scan
        self.hub_proxy: str | None = None  # the user's own proxy for downloads ("Get a model"'s; None: the system's)
        self.ram_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.ram_bar = MemoryBar(self)
        self.gpu_box = GpuCards(self)
        self.worker_devices = WorkerDevices(self)  # the Settings step's workers, as devices
        self.notes = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.notes.setWordWrap(True)
        look.hint(self.notes)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.summary, self.engine_status, self.engine_checks, self.engine_note, self.gpu_notice,
                       self.rebuild_box, self.ram_label, self.ram_bar, self.gpu_box, self.worker_devices, self.notes):
            layout.addWidget(widget)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh_live)
        self._live = live
        self._layout = layout
        self.retranslate()

    # --- data ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin the scan and, once it is back, the live refresh."""
        run_task(scan, on_done=self._on_scanned, on_error=self._on_scan_failed)

    def stop(self) -> None:
        self._timer.stop()

    def set_own_pids(self, pids: set[int]) -> None:
        """Processes of this app (the server): labelled as ours in the GPU process list."""
        self.own_pids = set(pids)

    def _on_scanned(self, report: HardwareReport) -> None:
        self.report = report
        self.last_sample = LiveSample(report.effective_ram_total_bytes, report.usable_ram_bytes(), list(report.gpus))
        self._render()
        self.fetch_box().set_report(report)
        if self.engine is not None:
            self.gpu_notice.look_up(report, *self.engine)
        self.hardwareScanned.emit(report)
        if self._live:
            self._timer.start()

    def _on_scan_failed(self, error: BaseException) -> None:
        self.summary.setText(self.tr("Could not read this machine's hardware: {error}").format(error=error))

    def refresh_live(self) -> None:
        if self._sampling:
            return  # the previous sample is still being taken; never pile up workers
        self._sampling = True
        run_task(sample, on_done=self._on_sample, on_error=self._on_sample_failed)

    def _on_sample(self, live: LiveSample) -> None:
        self._sampling = False
        self.last_sample = live
        self._render()

    def _on_sample_failed(self, error: BaseException) -> None:
        self._sampling = False

    # --- the engine row ---------------------------------------------------------------------------

    def set_engine(self, backend: str, server_bin: str | None = None) -> None:
        """The Settings step's engine: show whether it runs here (tested once per engine build, in a worker)."""
        key = (backend, server_bin or None)
        if key == self.engine and self.engine_state != "idle":
            return
        self.engine = key
        self.gpu_notice.look_up(self.report, *key)
        if self.gpu_fetch is not None:
            self.gpu_fetch.set_engine(*key)
        if self._engine_task is None:
            self._look_up_engine()
        # else: the running look-up sees that the engine changed and looks again for this one

    def fetch_box(self) -> GpuFetchBox:
        """The "get the GPU engine for this card" box, built on first use (its module loads after the first
        paint), under the GPU notice."""
        if self.gpu_fetch is None:
            from app.ui.steps.machine.gpu_fetch_box import GpuFetchBox

            box = self.gpu_fetch = GpuFetchBox(self)
            box.hide()
            self._layout.insertWidget(self._layout.indexOf(self.gpu_notice) + 1, box)
            box.proxy = self.hub_proxy
            box.useRequested.connect(self.useServerRequested)
            box.builtInRequested.connect(lambda: self.switchEngineRequested.emit(REBUILT_ENGINE))
            if self.engine is not None:
                box.set_engine(*self.engine)
            box.set_warning(self.gpu_warning)
        return self.gpu_fetch

    def set_hub_proxy(self, proxy: str | None) -> None:
        """The proxy the user set for downloads: the GPU engine's plan and download go through it too."""
        self.hub_proxy = proxy or None
        if self.gpu_fetch is not None:
            self.gpu_fetch.set_proxy(self.hub_proxy)

    def _on_gpu_warning(self, warning: GpuEngineWarning | None) -> None:
        self.gpu_warning = warning
        if self.gpu_fetch is not None or warning is not None:
            self.fetch_box().set_warning(warning)

    def test_engine_again(self) -> None:
        if self.engine is not None and self._engine_task is None:
            self._look_up_engine(run=True)

    def follow_rebuild(self, rebuild: EngineRebuild) -> None:
        """Show the window's engine rebuild (``EngineRebuild``); its result becomes the row when it is done."""
        self.rebuild_box.follow(rebuild)
        self.gpu_notice.follow_rebuild(rebuild)
        rebuild.started.connect(lambda: self.engine_checks.set_busy(True))
        rebuild.failed.connect(lambda _error: self.engine_checks.set_busy(False))
        rebuild.finished.connect(self._on_engine_rebuilt)

    def _look_up_engine(self, *, run: bool = False, result: EngineCheck | None = None) -> None:
        key = self.engine
        if key is None:
            return
        self.engine_state = "testing" if run else "looking"
        self._engine_task = run_task(look_up_engine, *key, run=run, result=result, owner=self,
                                     on_done=lambda lookup: self._on_engine_looked_up(key, lookup),
                                     on_error=lambda error: self._on_engine_lookup_failed(key, error, run))
        self._render_engine()

    def _on_engine_looked_up(self, key: tuple[str, str | None], lookup: EngineLookup) -> None:
        self._engine_task = None
        if self._pending_rebuilt is not None:  # a rebuild ended while this look-up ran: show its result
            self._on_engine_rebuilt(self._pending_rebuilt)
            return
        if key != self.engine:
            self._look_up_engine()  # the user chose another engine meanwhile
            return
        if lookup.row is None:
            self._look_up_engine(run=True)  # never tested here: test it now (a few seconds)
            return
        self._show_engine(lookup, self._row_for(lookup, lookup.row))

    def _on_engine_lookup_failed(self, key: tuple[str, str | None], error: BaseException, ran: bool) -> None:
        self._engine_task = None
        if key != self.engine:
            self._look_up_engine()
            return
        from app.core.engine.report import switch_to
        from app.core.problem import Check, Status, UserError

        engine = key[0]
        if isinstance(error, UserError):  # no llama-server file was found (its core next step names CLI flags)
            row = Check("engine_runs", Status.ERROR, error.message, None, evidence=error.evidence,
                        action=switch_to(other_engine(engine)))
            self._show_engine(None, row, engine_missing=True)
        elif ran:  # the self-test itself could not run: "not tested yet", with its button to try again
            self._engine_task = run_task(untested_row, engine, key[1], error, owner=self,
                                         on_done=lambda row: self._on_untested_row(key, row),
                                         on_error=lambda _error: self._on_untested_row(key, None))
        else:
            self._look_up_engine(run=True)

    def _on_untested_row(self, key: tuple[str, str | None], row: Check | None) -> None:
        self._engine_task = None
        if key != self.engine:
            self._look_up_engine()
        elif row is not None:
            self._show_engine(None, row)
        else:
            self.engine_state = "done"
            self._render_engine()

    def _on_engine_rebuilt(self, result: EngineCheck) -> None:
        self.engine_checks.set_busy(False)
        self._pending_rebuilt = None
        if self._engine_task is not None:
            self._pending_rebuilt = result
        elif self.engine is not None and self.engine[0] == REBUILT_ENGINE:
            self._look_up_engine(result=result)
        elif self.engine is not None:
            self._look_up_engine()

    def _row_for(self, lookup: EngineLookup, row: Check) -> Check:
        """The core's ``row`` of ``lookup``; its rebuild button becomes "use the other engine" where no rebuild is
        possible."""
        from app.core.engine.report import switch_to

        action = row.action
        if (action is not None and action.kind is Fix.REBUILD_ENGINE
                and (lookup.cannot_rebuild is not None or action.get("engine") != REBUILT_ENGINE)):
            row = replace(row, action=switch_to(other_engine(lookup.engine)))
        return row

    def _show_engine(self, lookup: EngineLookup | None, row: Check, *, engine_missing: bool = False) -> None:
        self._engine_task = None
        self.engine_state, self.engine_lookup, self.engine_row = "done", lookup, row
        self._engine_missing = engine_missing
        self.engine_checks.set_checks([row])
        self.engine_checks.set_busy(self.rebuild_box.active)
        self._render_engine()

    def _on_engine_fix(self, check: Check) -> None:
        action = check.action
        kind = action.kind if action is not None else None
        if kind is Fix.REBUILD_ENGINE:
            self.rebuildRequested.emit()
        elif action is not None and kind is Fix.SWITCH_ENGINE:
            current = self.engine[0] if self.engine is not None else REBUILT_ENGINE
            self.switchEngineRequested.emit(str(action.get("engine") or other_engine(current)))
        elif kind is Fix.TEST_ENGINE:
            self.test_engine_again()
        elif action is not None and kind is Fix.GET_GPU_ENGINE:
            self.fetch_box().apply(action)

    def _render_engine(self) -> None:
        testing = self.engine_state == "testing"
        self.engine_status.setVisible(testing)
        self.engine_status.setText(self.tr("Testing the engine on this processor (a few seconds)…"))
        self.engine_checks.setVisible(self.engine_row is not None and not testing)
        note = self._engine_note_text()
        self.engine_note.setText(note)
        self.engine_note.setVisible(bool(note) and self.engine_row is not None and not testing)

    def _engine_note_text(self) -> str:
        if self._engine_missing:  # said here: the core's next step for a missing llama-server names CLI flags
            return self.tr("Choose the llama-server program in Settings (Advanced), or use the built-in engine.")
        reason = self.engine_lookup.cannot_rebuild if self.engine_lookup is not None else None
        if reason is not None and self.engine_row is not None and self.engine_row.status is Status.ERROR:
            return reason.render()  # why the button offers the other engine instead of a rebuild
        return ""

    # --- rendering -------------------------------------------------------------------------------


    def retranslate(self) -> None:
        if self.report is None:
            self.summary.setText(self.tr("Looking at this machine…"))
        if self.engine_row is not None:  # core sentences in the new language
            self.engine_checks.set_checks([self.engine_row])
            self.engine_checks.set_busy(self.rebuild_box.active)
        self._render_engine()
        self._render()

    def _render(self) -> None:
        report, live = self.report, self.last_sample
        if report is None or live is None:
            return
        self.summary.setText(self.tr("{cpu}, {cores} cores · {os}").format(
            cpu=report.cpu_model or self.tr("unknown CPU"), cores=report.cpu_cores_logical or "?",
            os=report.os_description or report.os_name))
        used = max(0, live.ram_total - live.ram_available)
        self.ram_label.setText(self.tr("Memory (RAM)"))
        self.ram_bar.set_usage([Segment(self.tr("in use"), used, other=True)], live.ram_total,
                               self.tr("{free} free of {total}").format(
                                   free=human_bytes(live.ram_available), total=human_bytes(live.ram_total)))
        self.gpu_box.show_gpus(live.gpus, report, self.own_pids)
        self.notes.setText(self._notes_text(report))

    def _notes_text(self, report: HardwareReport) -> str:
        # core's notes cover WSL2, containers, cgroup limits; "why no GPU" is already on the GPU line
        skip = report.nvidia_note
        lines = [note.render() for note in (report.notes or []) if note != skip]
        return "\n".join(dict.fromkeys(lines))
