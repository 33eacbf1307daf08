"""An engine file an antivirus took away: told from what is left in the folder, with the steps to restore it.

Recordings (tests/data/windows/):
- llama_cpp_26120_defender_removed.txt — ggml-org/llama.cpp#26120 ("Detected: Trojan:Win32/Wacatac.H!ml / Status:
  Removed / ... file: PATH\\llama-b10107\\llama-mtmd-debug.exe"); llama.cpp#25204 and #28224 report the same for
  llama-cli.exe, llama.exe and llama-common.dll in 2026 ("The files are automatically quarantined by Windows
  Security").
- ollama_9094_access_denied.txt — ollama/ollama#9094 ("failed to start server fork/exec C:\\...\\ollama.exe: Access is
  denied."). Python raises the same refusal as PermissionError "[WinError 5] Access is denied".
The program is started for real (Popen); only the Windows wording of the access refusal is built from the recording.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.core.diagnosis import diagnose_start_failure
from app.core.launch.config import LaunchConfig
from app.core.problem import change_settings
from tests.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "windows"


def _start(program: Path) -> OSError:
    with pytest.raises(OSError) as caught:
        subprocess.Popen([str(program), "--version"])
    return caught.value


def _release_without_the_server(folder: Path) -> Path:
    folder.mkdir()
    for name in ("llama-server-impl.dll", "llama-common.dll", "llama.dll", "ggml.dll", "ggml-base.dll"):
        (folder / name).write_bytes(b"MZ")
    return folder / "llama-server.exe"


def test_the_recordings_say_what_defender_does():
    removed = (RECORDINGS / "llama_cpp_26120_defender_removed.txt").read_text(encoding="utf-8")
    assert "Wacatac" in removed and "Status: Removed" in removed
    assert "Access is denied." in (RECORDINGS / "ollama_9094_access_denied.txt").read_text(encoding="utf-8")


def test_an_engine_gone_from_a_folder_that_still_holds_llama_cpp(tmp_path: Path):
    program = _release_without_the_server(tmp_path / "llama-b10107")
    config = LaunchConfig(model="m.gguf", backend="llama-server", server_bin=str(program))
    diagnosis = diagnose_start_failure(_start(program), [str(program)], config)
    assert diagnosis.cause == "engine_quarantined"
    en, zh = diagnosis.message.render("en"), diagnosis.message.render("zh")
    assert "llama-server.exe is not in" in en and "ggml-base.dll" in en
    assert "llama-server.exe 不在" in zh and "ggml-base.dll" in zh
    step = diagnosis.next_step.render("en")
    assert "Windows Security → Virus & threat protection → Protection history" in step
    assert "Restore" in step and "Wacatac" in step
    assert "保护历史记录" in diagnosis.next_step.render("zh")
    assert diagnosis.action == change_settings({"backend": "embedded"})
    assert diagnosis.restartable is False


def test_a_wrong_path_is_not_blamed_on_an_antivirus(tmp_path: Path):
    program = tmp_path / "nowhere" / "llama-server.exe"
    diagnosis = diagnose_start_failure(_start(program), [str(program)], None)
    assert diagnosis.cause == "missing_binary"


def test_a_folder_without_llama_cpp_is_not_blamed_on_an_antivirus(tmp_path: Path):
    (tmp_path / "readme.txt").write_text("x")
    program = tmp_path / "llama-server.exe"
    assert diagnose_start_failure(_start(program), [str(program)], None).cause == "missing_binary"


def test_access_is_denied_on_windows_names_the_antivirus(tmp_path: Path):
    program = tmp_path / "llama-server.exe"
    program.write_bytes(b"MZ")
    # Python's PermissionError for CreateProcess's ERROR_ACCESS_DENIED, worded as Windows words it (the recording)
    error = PermissionError(13, "Access is denied", str(program), 5)
    diagnosis = diagnose_start_failure(error, [str(program)], None)
    assert diagnosis.cause == "engine_quarantined"
    en = diagnosis.message.render("en")
    assert "access is denied" in en and "antivirus" in en and "Wacatac" in en
    assert "Protection history" in diagnosis.next_step.render("en")


def test_a_posix_permission_problem_stays_one(tmp_path: Path):
    """Linux's own refusal (no execute bit) is a permission to fix, not an antivirus."""
    program = tmp_path / "llama-server"
    program.write_bytes(b"#!/bin/sh\n")
    program.chmod(0o644)
    diagnosis = diagnose_start_failure(_start(program), [str(program)], None)
    assert diagnosis.cause == "permission_denied"
