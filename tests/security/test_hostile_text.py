"""Text from a model file or a file name reaches the terminal as text: a GGUF whose general.name retitles the window,
clears the screen and prints a fake next step, and a file name that tries the same in `plan`'s error."""

from __future__ import annotations

import pytest

from app.cli import main
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

FAKE_STEP = "next step: run rm -rf ~"
HOSTILE = f"\x1b]0;pwned\x07\x1b[2J\x1b[H\r\n{FAKE_STEP}\n\u202eexe.txt\x9b31m"


def _printed(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def _assert_inert(printed: str) -> None:
    assert [c for c in "\x1b\x07\r\x9b\u202e" if c in printed] == [], repr(printed)
    assert not any(line.strip().startswith(FAKE_STEP) for line in printed.splitlines()), printed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_doctor_shows_a_hostile_model_name_as_text(capsys, tmp_path, lang):
    model = write_tiny_llama(tmp_path / "hostile.gguf", TinyModelSpec(name=HOSTILE))
    code, printed = _printed(capsys, "--lang", lang, "doctor", str(model), "--no-sha256")
    assert code == 0 and "exe.txt" in printed  # the name is still shown, only its controls are gone
    _assert_inert(printed)


def test_plan_shows_a_hostile_file_name_as_text(capsys, tmp_path):
    code, printed = _printed(capsys, "plan", str(tmp_path / f"model{HOSTILE}.gguf"))
    assert code == 1 and "does not exist" in printed
    _assert_inert(printed)
