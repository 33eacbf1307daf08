"""Step 1, Machine: RAM and each GPU's VRAM as live bars, who else holds GPU memory, driver/CUDA, notes.

The full scan (``hardware.scan_hardware``) runs once in a worker; afterwards a 1 s timer samples RAM
and GPUs (``hardware.read_gpus`` + psutil) in a worker too, never on the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from app.core.text import human_bytes
from app.ui.widgets.memory_bar import MemoryBar, Segment
from app.ui.workers import run_task
from app.ui.widgets import look

REFRESH_MS = 1000


@dataclass
class LiveSample:
    ram_total: int
    ram_available: int
    gpus: list[Any] = field(default_factory=list)


def scan() -> Any:  # worker thread
    from app.core import hardware

    return hardware.scan_hardware()


def sample() -> LiveSample:  # worker thread
    from app.core import hardware

    memory = hardware.read_memory()  # capped by a container's memory limit, like the plan's RAM budget
    return LiveSample(memory.total_bytes, memory.usable_bytes, hardware.read_gpus())


class MachinePanel(QWidget):
    """Emits ``hardwareScanned(report)`` once the full scan is done (the plan needs it)."""

    hardwareScanned = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, live: bool = True) -> None:
        super().__init__(parent)
        self.report: Any = None
        self.last_sample: LiveSample | None = None
        self.own_pids: set[int] = set()
        self._sampling = False
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.ram_label = QLabel(self)
        self.ram_bar = MemoryBar(self)
        self.gpu_box = QWidget(self)
        self.gpu_layout = QGridLayout(self.gpu_box)
        self.gpu_layout.setContentsMargins(0, 0, 0, 0)
        self.notes = QLabel(self)
        self.notes.setWordWrap(True)
        look.hint(self.notes)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.summary, self.ram_label, self.ram_bar, self.gpu_box, self.notes):
            layout.addWidget(widget)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh_live)
        self._gpu_rows: list[tuple[QLabel, MemoryBar, QLabel]] = []
        self._live = live
        self.retranslateUi()

    # --- data ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin the scan and, once it is back, the live refresh."""
        run_task(scan, on_done=self._on_scanned, on_error=self._on_scan_failed)

    def stop(self) -> None:
        self._timer.stop()

    def set_own_pids(self, pids: set[int]) -> None:
        """Processes of this app (the server): labelled as ours in the GPU process list."""
        self.own_pids = set(pids)

    def _on_scanned(self, report: Any) -> None:
        self.report = report
        self.last_sample = LiveSample(report.effective_ram_total_bytes, report.usable_ram_bytes(), list(report.gpus))
        self._render()
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

    # --- rendering -------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslateUi()
        super().changeEvent(event)

    def retranslateUi(self) -> None:  # noqa: N802
        if self.report is None:
            self.summary.setText(self.tr("Looking at this machine…"))
        self._render()

    def _render(self) -> None:
        report, live = self.report, self.last_sample
        if report is None or live is None:
            return
        self.summary.setText(self.tr("{cpu}, {cores} cores · {os}").format(
            cpu=report.cpu_model or self.tr("unknown CPU"), cores=report.cpu_cores_logical or "?",
            os=getattr(report, "os_description", "") or report.os_name))
        used = max(0, live.ram_total - live.ram_available)
        self.ram_label.setText(self.tr("Memory (RAM)"))
        self.ram_bar.set_usage([Segment(self.tr("in use"), used, other=True)], live.ram_total,
                               self.tr("{free} free of {total}").format(
                                   free=human_bytes(live.ram_available), total=human_bytes(live.ram_total)))
        self._render_gpus(live.gpus)
        self.notes.setText(self._notes_text(report))

    def _notes_text(self, report: Any) -> str:
        # core's notes cover WSL2, containers, cgroup limits; "why no GPU" is already on the GPU line
        skip = getattr(report, "nvidia_note", None)
        lines = [note.render() for note in (report.notes or []) if note != skip]
        return "\n".join(dict.fromkeys(lines))

    def _ensure_gpu_rows(self, count: int) -> None:
        while len(self._gpu_rows) < max(count, 1):
            row = len(self._gpu_rows)
            name, bar, detail = QLabel(self.gpu_box), MemoryBar(self.gpu_box), QLabel(self.gpu_box)
            detail.setWordWrap(True)
            look.hint(detail)
            name.setWordWrap(True)
            for i, widget in enumerate((name, bar, detail)):
                self.gpu_layout.addWidget(widget, row * 3 + i, 0)
            self._gpu_rows.append((name, bar, detail))

    def _render_gpus(self, gpus: list[Any]) -> None:
        self._ensure_gpu_rows(len(gpus))
        for i, (name, bar, detail) in enumerate(self._gpu_rows):
            visible = i < len(gpus)
            bar.setVisible(visible)
            name.setVisible(visible or i == 0)
            detail.setVisible(visible)
            if visible:
                self._render_gpu(gpus[i], name, bar, detail)
        if not gpus:
            name = self._gpu_rows[0][0]
            others = ", ".join(getattr(self.report, "other_gpus", []) or [])
            why = getattr(self.report, "nvidia_note", None)  # e.g. "no NVIDIA driver is installed", said kindly
            text = why.render() if why is not None else self.tr(
                "No NVIDIA GPU found. That is fine: models run on the processor, only slower.")
            if others:
                text += " " + self.tr("(Also seen: {others}; not used for acceleration.)").format(others=others)
            name.setText(text)

    def _render_gpu(self, gpu: Any, name: QLabel, bar: MemoryBar, detail: QLabel) -> None:
        total = gpu.vram_total_bytes or 0
        used = gpu.vram_used_bytes or 0
        free = gpu.vram_free_bytes if gpu.vram_free_bytes is not None else max(0, total - used)
        name.setText(self.tr("GPU {index}: {name}").format(index=gpu.index, name=gpu.name))
        bar.set_usage([Segment(self.tr("in use"), used, other=True)], total, self.tr("{free} free of {total}").format(
            free=human_bytes(free), total=human_bytes(total)))
        parts = [self.tr("driver {driver}, CUDA {cuda}").format(
            driver=gpu.driver_version or "?", cuda=gpu.cuda_driver_version or "?")]
        holders = [self._process_text(p) for p in gpu.other_processes or []]
        if holders:
            parts.append(self.tr("held by: {list}").format(list=", ".join(holders)))
        detail.setText(" · ".join(parts))

    def _process_text(self, process: Any) -> str:
        label = self.tr("this app's server") if process.pid in self.own_pids else process.name
        size = human_bytes(process.used_bytes) if process.used_bytes is not None else "?"
        return f"{label} ({size})"
