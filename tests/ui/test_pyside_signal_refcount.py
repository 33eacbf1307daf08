"""PySide6-Essentials 6.12.0 dropped a reference to True on every Signal.emit(); on Python 3.11 the process
aborted ("bool_dealloc") after ~600 emits. The app emits thousands, so the installed Qt must survive this."""

import subprocess
import sys

SCRIPT = """
from PySide6.QtCore import QCoreApplication, QObject, Signal
app = QCoreApplication([])
Emitter = type("Emitter", (QObject,), {"fired": Signal(str)})
emitter = Emitter()
for _ in range(20000):
    emitter.fired.emit("x")
print("survived")
"""


def test_many_signal_emits_do_not_abort_the_interpreter():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "survived"
