"""napari-style contract: importing every app.core module must not pull in Qt."""

import pkgutil
import subprocess
import sys

import app.core


def test_core_modules_import_without_qt():
    names = [m.name for m in pkgutil.walk_packages(app.core.__path__, "app.core.")]
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}: importlib.import_module(n)\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'PyQt'))]\n"
        "assert not bad, bad\n"
        "print(len(" + repr(names) + "))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) == len(names) >= 5
