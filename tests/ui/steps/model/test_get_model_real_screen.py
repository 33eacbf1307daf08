""""Get a model" on a real 1024 x 700 screen (Xvfb with openbox managing the windows, tests/ui/real_screen/xscreen):
the dialog, its frame included, lies inside the screen's available area and no text in it is cut, in English and
Chinese, with a repository's files and their pills shown. Without Xvfb and openbox this test skips and says so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.paths import ROOT
from tests.ui.real_screen import xscreen

pytestmark = pytest.mark.slow  # a real X server and the whole window in a child process


def test_the_dialog_fits_a_real_1024_by_700_screen(tmp_path):
    missing = xscreen.missing()
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (scripts/setup.sh installs them)")
    out = tmp_path / "report.json"
    with xscreen.x_screen(1024, 700, tmp_path) as env:
        done = subprocess.run([sys.executable, "-X", "faulthandler", "-m",
                               "tests.ui.steps.model.get_model_screen_driver", "--out", str(out)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    if not out.exists():
        pytest.fail(f"the driver wrote no report (exit {done.returncode}):\n{done.stderr[-4000:]}", pytrace=False)
    report = json.loads(out.read_text(encoding="utf-8"))
    ax, ay, aw, ah = report["available"]
    for lang in ("en", "zh"):
        x, y, w, h = report[lang]["frame"]
        assert ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah, (lang, report)
        assert report[lang]["clipped"] == [], lang
    assert report["en"]["pills"] == ["Fits on the graphics card"] and report["en"]["download"] == "Download"
    assert report["zh"]["pills"] == ["显卡放得下"] and report["zh"]["download"] == "下载"
