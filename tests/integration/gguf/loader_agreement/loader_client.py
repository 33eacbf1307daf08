"""Parent side of the loader child: send paths, read verdicts, restart the child after a GGML_ASSERT abort."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

CHILD = Path(__file__).with_name("load_child.py")


class RealLoader:
    """llama.cpp's loader (llama-cpp-python's low-level API) in one long-lived child process.

    A spare child is started ahead of need, so that the restart after an abort costs no import time.
    """

    def __init__(self, timeout_s: float = 60.0) -> None:
        self._proc: subprocess.Popen | None = None
        self._spare: subprocess.Popen | None = None
        self._timeout = timeout_s
        self.crashes = 0

    @staticmethod
    def _spawn() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(CHILD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, cwd=str(ROOT), bufsize=1)

    def _start(self) -> subprocess.Popen:
        proc = self._spare or self._spawn()
        self._spare = self._spawn()
        ready = proc.stdout.readline()
        if not ready:
            raise RuntimeError("the loader child did not start (is llama-cpp-python installed?)")
        return proc

    def load(self, path: Path) -> dict:
        """{"loads": bool, "error": str}; an abort counts as not loading, with the signal as the error."""
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        proc = self._proc
        proc.stdin.write(f"{path}\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if line:
            return json.loads(line)
        code = proc.wait(timeout=self._timeout)
        _close_pipes(proc)
        self.crashes += 1
        self._proc = None
        return {"path": str(path), "loads": False, "error": f"loader process died (exit {code}: GGML_ASSERT/abort)"}

    def close(self) -> None:
        for proc in (self._proc, self._spare):
            if proc is None:
                continue
            try:
                proc.stdin.close()
            except OSError:  # a child that died with input still buffered
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            _close_pipes(proc)
        self._proc = self._spare = None


def _close_pipes(proc: subprocess.Popen) -> None:
    """A finished child's pipes closed now, not when the garbage collector gets to them (a ResourceWarning)."""
    for pipe in (proc.stdin, proc.stdout):
        if pipe is None:
            continue
        try:
            pipe.close()
        except OSError:  # stdin with unwritten input to a dead child: closed all the same
            pass
