"""Log pane under a flood: throughput, worst event-loop stall, bounded memory.

Run: ``.venv/bin/python benchmarks/bench_log_pane.py`` (offscreen by default).

0. Baseline: worst heartbeat gap of an idle loop and with a busy Python thread (machine + GIL noise).
1. 100,000 lines pushed by a worker thread through ``SupervisorBridge``'s batching path into a ``LogPane``
   (targets: >= 50,000 lines/s end to end, worst stall <= 50 ms, memory bounded).
2. The same into a QPlainTextEdit (batched appendPlainText + setMaximumBlockCount), the textbook design.
3. A naive path (one queued signal and one ``appendPlainText`` per line), for the ratio.
4. A real child process writing 10,000 lines/s to stdout for 3 s, read by the supervisor's own
   ``ChildProcess`` reader and ``ServerLog`` (rotating file), events fed to the bridge as the Supervisor does.

Stall = the longest gap between ticks of a 5 ms QTimer heartbeat while lines flow (GIL contention included).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("GGUF_LAUNCHER_HOME", tempfile.mkdtemp(prefix="bench-log-pane-"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
import psutil
from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from app.core.process.child_log import LogLine, ServerLog
from app.core.server.events import Event, LogEvent, State
from app.ui.logs.log_pane import LogPane
from app.ui.steps.server.supervisor_bridge import SupervisorBridge

MAX_LINES = 10_000
SAMPLE_LINES = (
    "slot update_slots: id  0 | task 12 | prompt processing progress, n_past = {i}, n_tokens = 512, progress = 0.5",
    "srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200",
    "llama_kv_cache: warning: cache nearly full at line {i}",
    "ggml_backend_cuda_buffer_type_alloc_buffer: error: failed to allocate buffer {i}",
    "print_info: n_ctx_train = 4096 | n_embd = 4096 | n_head = 32 | line {i}",
)


def line_text(i: int) -> str:
    return SAMPLE_LINES[i % len(SAMPLE_LINES)].format(i=i)


class Heartbeat:
    """A 5 ms timer; the longest gap between its ticks is the worst event-loop stall."""

    def __init__(self) -> None:
        self.timer = QTimer(interval=5, timerType=Qt.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.clock = QElapsedTimer()
        self.worst_ms = 0.0
        self._last = 0.0

    def start(self) -> None:
        self.clock.start()
        self._last = 0.0
        self.worst_ms = 0.0
        self.timer.start()

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed() / 1e6
        self.worst_ms = max(self.worst_ms, now - self._last)
        self._last = now

    def stop(self) -> float:
        self.timer.stop()
        return self.worst_ms


class EventSource:
    """The subscribe() half of a Supervisor: worker threads push events to the bridge through it."""

    def __init__(self) -> None:
        self.callbacks = []

    def subscribe(self, callback):
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)

    def emit_line(self, stream: str, text: str) -> None:
        line = LogLine(time.time(), stream, text)  # what the supervisor's log hands its log event
        for callback in self.callbacks:
            callback(Event(line.time, State.READY, LogEvent(line)))


def rss_mib() -> float:
    return psutil.Process().memory_info().rss / 2**20


def warm_up(app: QApplication, sink) -> None:
    """Show and paint the widget once: first-paint costs (fonts, glyph caches) are start-up, not flood."""
    sink.append_lines([LogLine(0.0, "stderr", "warm-up line: error warning info")])
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.005)


def run_until(app: QApplication, done, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.001)


class PlainTextSink:
    """The textbook alternative: batched appendPlainText into a QPlainTextEdit with setMaximumBlockCount."""

    def __init__(self, max_lines: int) -> None:
        self.view = QPlainTextEdit(readOnly=True)
        self.view.setMaximumBlockCount(max_lines)
        self.view.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.view.setUndoRedoEnabled(False)
        self.view.resize(900, 500)
        self.view.show()

    def append_lines(self, lines: list) -> None:
        self.view.appendPlainText("\n".join(getattr(line, "text", line) for line in lines))

    def last_line(self) -> str:
        return self.view.document().lastBlock().text()

    def line_count(self) -> int:
        return self.view.document().blockCount()

    def close(self) -> None:
        self.view.close()


class PaneSink:
    def __init__(self, max_lines: int) -> None:
        self.pane = LogPane(max_lines=max_lines)
        self.pane.resize(900, 500)
        self.pane.show()
        self.append_lines = self.pane.append_lines

    def last_line(self) -> str:
        return self.pane.view.lines[-1] if self.pane.view.lines else ""

    def line_count(self) -> int:
        return self.pane.shown_line_count()

    def close(self) -> None:
        self.pane.close()


def bench_through_bridge(app: QApplication, sink, total: int) -> dict:
    source = EventSource()
    bridge = SupervisorBridge(source)
    received = [0]
    bridge.logLines.connect(lambda lines: received.__setitem__(0, received[0] + len(lines)))
    bridge.logLines.connect(sink.append_lines)
    warm_up(app, sink)
    last = line_text(total - 1)
    rss_before = rss_mib()
    heartbeat = Heartbeat()
    heartbeat.start()
    started = time.perf_counter()
    producer = threading.Thread(target=lambda: [source.emit_line("stderr", line_text(i)) for i in range(total)])
    producer.start()
    run_until(app, lambda: not producer.is_alive() and sink.last_line() == last)
    elapsed = time.perf_counter() - started
    stall = heartbeat.stop()
    result = {"lines": total, "seconds": elapsed, "lines_per_s": total / elapsed, "worst_stall_ms": stall,
              "delivered": received[0], "blocks": sink.line_count(),
              "rss_before_mib": rss_before, "rss_after_mib": rss_mib()}
    bridge.close()
    sink.close()
    return result


class NaiveRelay(QObject):
    """One queued signal per line, one appendPlainText per line: what batching replaces."""

    line = Signal(str)


def bench_naive(app: QApplication, total: int) -> dict:
    sink = PlainTextSink(MAX_LINES)
    relay = NaiveRelay()
    relay.line.connect(sink.view.appendPlainText, Qt.QueuedConnection)
    warm_up(app, sink)
    last = line_text(total - 1)
    heartbeat = Heartbeat()
    heartbeat.start()
    started = time.perf_counter()

    def produce() -> None:
        for i in range(total):
            relay.line.emit(line_text(i))

    producer = threading.Thread(target=produce)
    producer.start()
    run_until(app, lambda: not producer.is_alive() and sink.last_line() == last)
    elapsed = time.perf_counter() - started
    stall = heartbeat.stop()
    sink.close()
    return {"lines": total, "seconds": elapsed, "lines_per_s": total / elapsed, "worst_stall_ms": stall}


CHILD_SCRIPT = r"""
import sys, time
rate, seconds, batch = int(sys.argv[1]), float(sys.argv[2]), 100
lines = ["slot update_slots: id 0 | n_past = %d | progress line from a busy server" % i for i in range(batch)]
start, sent = time.monotonic(), 0
while sent < rate * seconds:
    sys.stdout.write("\n".join("%s #%d" % (l, sent + k) for k, l in enumerate(lines)) + "\n")
    sys.stdout.flush()
    sent += batch
    wait = start + sent / rate - time.monotonic()
    if wait > 0:
        time.sleep(wait)
sys.stdout.write("last line %d\n" % sent)
"""


def bench_child_flood(app: QApplication, rate: int, seconds: float) -> dict:
    from app.core.process.child import ChildProcess

    source = EventSource()
    bridge = SupervisorBridge(source)
    sink = PaneSink(MAX_LINES)
    bridge.logLines.connect(sink.append_lines)
    warm_up(app, sink)
    server_log = ServerLog("bench-flood")
    counted = [0]
    exited = threading.Event()

    def on_line(stream: str, text: str) -> None:
        line: LogLine = server_log.append(stream, text)  # the supervisor writes every line to its file too
        counted[0] += 1
        source.emit_line(line.stream, line.text)

    rss_before = rss_mib()
    heartbeat = Heartbeat()
    heartbeat.start()
    started = time.perf_counter()
    child = ChildProcess([sys.executable, "-c", CHILD_SCRIPT, str(rate), str(seconds)], on_line=on_line,
                         on_exit=lambda _child, _rc: exited.set())
    total = int(rate * seconds)
    last = f"last line {total}"
    run_until(app, lambda: exited.is_set() and sink.last_line() == last)
    elapsed = time.perf_counter() - started
    stall = heartbeat.stop()
    child.stop(1.0)
    server_log.close()
    result = {"lines": counted[0], "seconds": elapsed, "lines_per_s": counted[0] / elapsed, "worst_stall_ms": stall,
              "blocks": sink.line_count(), "rss_before_mib": rss_before, "rss_after_mib": rss_mib()}
    bridge.close()
    sink.close()
    return result


def baseline_stalls(app: QApplication, seconds: float = 1.0) -> tuple[float, float]:
    """Worst heartbeat gap with nothing to do, and with a busy Python thread (GIL + machine noise)."""
    def measure() -> float:
        heartbeat = Heartbeat()
        heartbeat.start()
        run_until(app, lambda: heartbeat.clock.elapsed() > seconds * 1000)
        return heartbeat.stop()

    idle = measure()
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)])
    spinner.start()
    busy = measure()
    stop.set()
    spinner.join()
    return idle, busy


def print_bridge_result(title: str, result: dict) -> None:
    print(title)
    print(f"   {result['lines_per_s']:>10,.0f} lines/s end to end (target >= 50,000)   {result['seconds']:.2f} s")
    print(f"   worst event-loop stall {result['worst_stall_ms']:.1f} ms   (target <= 50 ms)")
    print(f"   delivered {result['delivered']:,} lines (the rest summarised as skipped), shown {result['blocks']:,}")
    print(f"   RSS {result['rss_before_mib']:.0f} MiB -> {result['rss_after_mib']:.0f} MiB")


def main() -> int:
    lines, naive_lines, flood_s, baseline_s = harness.pick((100_000, 10_000, 3.0, 1.0), (10_000, 1_000, 0.5, 0.3))
    harness.announce_short(f"{lines:,} lines through the bridge, {naive_lines:,} naive, a {flood_s} s child flood")
    app = QApplication.instance() or QApplication(sys.argv)
    print(f"cpus: {os.cpu_count()}  load avg: {os.getloadavg()[0]:.2f}  (shared machine: numbers vary)")
    idle, busy = baseline_stalls(app, baseline_s)
    print(f"baseline worst stall: idle loop {idle:.1f} ms, with a busy Python thread {busy:.1f} ms")
    pane = bench_through_bridge(app, PaneSink(MAX_LINES), lines)
    plain = bench_through_bridge(app, PlainTextSink(MAX_LINES), lines)
    naive = bench_naive(app, naive_lines)
    flood = bench_child_flood(app, 10_000, flood_s)
    print_bridge_result(f"\n1) {lines:,} lines: SupervisorBridge batching -> LogPane (painted view, 10,000 lines kept)",
                        pane)
    print_bridge_result("\n2) same, into QPlainTextEdit.appendPlainText + setMaximumBlockCount(10,000)", plain)
    print(f"\n3) naive, {naive_lines:,} lines: one queued signal + one appendPlainText per line")
    print(f"   {naive['lines_per_s']:>10,.0f} lines/s   worst stall {naive['worst_stall_ms']:.1f} ms")
    print(f"\n   ratios  LogPane / QPlainTextEdit batched: {pane['lines_per_s'] / plain['lines_per_s']:.1f}x "
          "throughput, "
          f"stall {pane['worst_stall_ms']:.0f} vs {plain['worst_stall_ms']:.0f} ms;  "
          f"LogPane / naive: {pane['lines_per_s'] / naive['lines_per_s']:.1f}x")
    print(f"\n4) real child writing 10,000 lines/s for {flood_s} s via ChildProcess reader + ServerLog file -> bridge "
          "-> LogPane")
    print(f"   {flood['lines']:,} lines in {flood['seconds']:.2f} s (incl. process start)")
    print(f"   worst event-loop stall {flood['worst_stall_ms']:.1f} ms   (target <= 50 ms)")
    print(f"   shown {flood['blocks']:,}   RSS {flood['rss_before_mib']:.0f} MiB -> {flood['rss_after_mib']:.0f} MiB")
    ok = (pane["lines_per_s"] >= 50_000 and pane["worst_stall_ms"] <= 50 and flood["worst_stall_ms"] <= 50
          and pane["blocks"] <= MAX_LINES)
    print("\nall targets met" if ok else "\nsome targets missed (see above)")
    return 0


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
