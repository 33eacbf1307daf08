"""Child output: \\r progress lines split, every line tagged with time and stream, full text in the log file."""

from __future__ import annotations

import sys
import threading

from app.core.process.child import ChildProcess
from app.core.process.child_log import ServerLog

SCRIPT = r"""
import sys, time
for pct in (10, 50, 100):
    sys.stderr.write(f"loading {pct}%\r"); sys.stderr.flush(); time.sleep(0.02)
sys.stderr.write("\nloaded\r\n"); sys.stderr.flush()
print("to stdout", flush=True)
sys.stdout.write("no newline at the end")
"""


def test_lines_split_on_cr_and_lf_and_reach_tail_and_file(app_home):
    log = ServerLog("test-logs", max_lines=4)
    exited = threading.Event()
    child = ChildProcess([sys.executable, "-c", SCRIPT], on_line=log.append, on_exit=lambda c, rc: exited.set())
    assert exited.wait(20) and child.returncode == 0
    file_lines = log.path.read_text(encoding="utf-8").splitlines()
    texts = [line.split("] ", 1)[1] for line in file_lines]
    stderr_texts = [line.split("] ", 1)[1] for line in file_lines if "[stderr]" in line]
    assert stderr_texts == ["loading 10%", "loading 50%", "loading 100%", "loaded"]
    assert "to stdout" in texts and "no newline at the end" in texts
    assert all(line[:4].isdigit() and line[19] == "." for line in file_lines)  # "YYYY-MM-DD HH:MM:SS.mmm [stream]"
    tail = log.tail()
    assert len(tail) == 4 and tail[-1].time >= tail[0].time  # bounded in memory, full on disk
    assert {line.stream for line in tail} <= {"stdout", "stderr"}
    log.close()
