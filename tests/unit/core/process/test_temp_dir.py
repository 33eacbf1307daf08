"""A server child never gets a non-ASCII temporary folder (a real child process on Linux plays the Windows part).

Recorded from lmstudio-ai/lmstudio-bug-tracker#2231 ("0.4.20: All GGUF model loads fail when %TEMP% contains
non-ASCII characters (llama-server cannot open --chat-template-file)"): with %TEMP% = ``C:\\Users\\田中　~1\\AppData\\
Local\\Temp`` llama-server printed ``error while handling argument "--chat-template-file": error: failed to open file
'C:\\Users\\田中　~1\\AppData\\Local\\Temp\\lmstudio-llama-chat-template-bjEtFI\\chat-template.jinja'`` and LM Studio
reported ``exited before becoming healthy. exitCode=1, signal=null`` (tests/data/windows/lmstudio_2231_temp.txt);
LostRuins/koboldcpp#2339 (SD models fail "if TEMP path contains non-ASCII chars (i.e. in username)").
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from app.core.process.child import ChildProcess, child_environment
from app.core.process.temp_dir import with_ascii_temp
from tests.paths import ROOT

RECORDING = ROOT / "tests" / "data" / "windows" / "lmstudio_2231_temp.txt"


def _child_sees(env: dict[str, str]) -> dict[str, str]:
    lines, done = [], threading.Event()
    code = ("import os, tempfile; print(os.environ.get('TEMP')); print(os.environ.get('TMPDIR')); "
            "f = tempfile.NamedTemporaryFile(delete=False); f.write(b'x'); f.close(); print(f.name)")
    child = ChildProcess([sys.executable, "-c", code], env=env, register=False,
                         on_line=lambda _stream, text: lines.append(text), on_exit=lambda *_: done.set())
    assert done.wait(30)
    assert child.wait(5) == 0, lines
    return dict(zip(("TEMP", "TMPDIR", "written"), lines, strict=True))


def test_the_recorded_failure_is_a_non_ascii_temp_path():
    text = RECORDING.read_text(encoding="utf-8")
    assert "田中" in text and "chat-template.jinja" in text and "exitCode=1" in text


def test_a_child_with_a_non_ascii_temp_gets_an_ascii_one_it_can_write(tmp_path: Path):
    user_temp = tmp_path / "田中　太郎" / "Temp"
    user_temp.mkdir(parents=True)
    env = {**os.environ, "TEMP": str(user_temp), "TMPDIR": str(user_temp)}
    seen = _child_sees(env)
    assert seen["TEMP"].isascii() and seen["TMPDIR"].isascii()
    assert seen["TEMP"] == seen["TMPDIR"] != str(user_temp)
    assert Path(seen["written"]).parent == Path(seen["TMPDIR"])  # the child really writes there
    assert Path(seen["written"]).read_bytes() == b"x"
    Path(seen["written"]).unlink()


def test_an_ascii_temp_is_left_as_the_user_set_it(tmp_path: Path):
    plain = tmp_path / "Temp"
    plain.mkdir()
    seen = _child_sees({**os.environ, "TEMP": str(plain), "TMPDIR": str(plain)})
    assert seen["TEMP"] == seen["TMPDIR"] == str(plain)
    Path(seen["written"]).unlink()


def test_the_rule_changes_only_the_child_environment():
    env = {"TEMP": "C:\\Users\\Егор\\AppData\\Local\\Temp", "TMP": "C:\\Temp", "KEEP": "1"}
    result = with_ascii_temp(env)
    assert result["TEMP"].isascii() and result["TMP"] == "C:\\Temp" and result["KEEP"] == "1"
    assert env["TEMP"] == "C:\\Users\\Егор\\AppData\\Local\\Temp"  # the given mapping is not changed
    assert child_environment(env)["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
