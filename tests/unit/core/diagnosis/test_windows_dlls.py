"""0xC0000135 (STATUS_DLL_NOT_FOUND) told from the engine folder: which DLL is missing, and whose fix it is.

Recordings (tests/data/windows/):
- ollama_5669_dll_not_found.txt — ollama/ollama#5669 ("error loading llama server" error="llama runner process has
  terminated: exit status 0xc0000135 ").
- atomic_chat_175_impl_dll.txt — AtomicBot-ai/Atomic-Chat#175 ("The code execution cannot proceed because
  llama-server-impl.dll was not found. Reinstalling the program may fix this problem."): recent llama.cpp builds make
  llama-server.exe a thin launcher of llama-server-impl.dll.
- llama_cpp_28224_defender.txt — ggml-org/llama.cpp#28224: Defender quarantined llama-common.dll among others as
  "Trojan:Win32/Wacatac.B!ml".
- winget_exit_code_table.txt — microsoft/winget-pkgs#287472 (the validator's table: "C0000135 | -1073741515 |
  3221225781 | STATUS_DLL_NOT_FOUND | ... The most common dependency is `Microsoft.VCRedist.2015+.x64`").
- ggml-org/llama.cpp#13767: llama-cli.exe would not run on Windows Server until the "Microsoft Visual C++
  Redistributable" was installed (MSVCP140.dll).
The folders are laid out with minimal PE files (fake_pe.py); the PE reader is checked on real Windows programs too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.diagnosis import diagnose, windows_dlls
from app.core.diagnosis.windows_dlls import missing_dlls, pe_imports
from app.core.launch.config import LaunchConfig
from app.core.problem import change_settings
from tests.paths import ROOT
from tests.unit.core.diagnosis.fake_pe import llama_release, system_folder, vc_runtime, write_pe

RECORDINGS = ROOT / "tests" / "data" / "windows"


def _real_windows_program() -> Path:
    import pip._vendor.distlib as distlib  # pip ships Windows launchers (w64.exe) on every platform

    return Path(distlib.__file__).parent / "w64.exe"


def _config(program: Path) -> LaunchConfig:
    return LaunchConfig(model="C:/models/m.gguf", backend="llama-server", server_bin=str(program))


@pytest.fixture()
def system32(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Windows' system folder as the loader would search it, with the VC++ runtime installed (tests remove it)."""
    folder = system_folder(tmp_path / "System32")
    monkeypatch.setattr(windows_dlls, "system_dirs", lambda: [folder])
    return folder


def _status_code() -> str:
    line = (RECORDINGS / "ollama_5669_dll_not_found.txt").read_text(encoding="utf-8").strip()
    return line.rsplit("exit status", 1)[1].strip(' "')


def test_the_reader_reads_a_real_windows_program():
    assert pe_imports(_real_windows_program().read_bytes()) == ["KERNEL32.dll", "USER32.dll", "SHLWAPI.dll"]
    assert pe_imports(b"\x7fELF" + b"\0" * 100) is None


@pytest.mark.parametrize("spelling", ["0xc0000135", -1073741515, 3221225781, "exit status 0xc0000135 "])
def test_every_spelling_of_the_recorded_code_is_dll_not_found(spelling, system32, tmp_path):
    program = llama_release(tmp_path / "llama", without=("llama-server-impl.dll",))
    assert diagnose(spelling, [], _config(program)).cause == "engine_files_missing"
    assert _status_code() == "0xc0000135"


def test_the_thin_launchers_impl_dll_removed_is_named(system32, tmp_path):
    program = llama_release(tmp_path / "llama-b10752", without=("llama-server-impl.dll",))
    diagnosis = diagnose(_status_code(), [], _config(program))
    assert diagnosis.cause == "engine_files_missing"
    assert "llama-server-impl.dll" in diagnosis.message.render("en")
    assert "llama-server-impl.dll" in diagnosis.message.render("zh")
    assert "Protection history" in diagnosis.next_step.render("en") and "Restore" in diagnosis.next_step.render("en")
    assert "保护历史记录" in diagnosis.next_step.render("zh")
    assert diagnosis.action == change_settings({"backend": "embedded"})
    assert diagnosis.restartable is False
    recorded = (RECORDINGS / "atomic_chat_175_impl_dll.txt").read_text(encoding="utf-8")
    assert "llama-server-impl.dll was not found" in recorded


def test_a_dll_deeper_in_the_chain_is_found_too(system32, tmp_path):
    """llama-common.dll is imported by llama-server-impl.dll, not by the program (Defender took it in #28224)."""
    assert "llama-common.dll" in (RECORDINGS / "llama_cpp_28224_defender.txt").read_text(encoding="utf-8")
    program = llama_release(tmp_path / "llama", without=("llama-common.dll",))
    assert missing_dlls(program).engine == ("llama-common.dll",)
    assert "llama-common.dll" in diagnose(0xC0000135, [], _config(program)).message.render("en")


def test_a_backend_nobody_imports_is_not_required(system32, tmp_path):
    program = llama_release(tmp_path / "llama", without=("ggml-cpu-haswell.dll",))
    assert missing_dlls(program).engine == ()


def _remove_vc_runtime(system32: Path) -> None:
    for dll in system32.glob("*140*.dll"):
        dll.unlink()


def test_no_vc_runtime_anywhere_asks_for_vc_redist(system32, tmp_path):
    _remove_vc_runtime(system32)
    program = llama_release(tmp_path / "llama")
    diagnosis = diagnose(0xC0000135, [], _config(program))
    assert diagnosis.cause == "vc_runtime_missing"
    assert "MSVCP140.dll" in diagnosis.message.render("en")
    assert "vc_redist.x64.exe" in diagnosis.next_step.render("en")
    assert "Latest supported Visual C++ Redistributable" in diagnosis.next_step.render("en")
    assert "vc_redist.x64.exe" in diagnosis.next_step.render("zh")


def test_a_runtime_beside_the_program_counts_as_installed(system32, tmp_path):
    _remove_vc_runtime(system32)
    program = llama_release(tmp_path / "llama")
    vc_runtime(program.parent)
    assert missing_dlls(program).any is False


def test_every_file_present_rules_out_a_removed_file(system32, tmp_path):
    """Contradicting evidence: the folder is complete, so nothing was removed; the runtime is what is left."""
    program = llama_release(tmp_path / "llama")
    diagnosis = diagnose(0xC0000135, [], _config(program))
    assert diagnosis.cause == "missing_library"
    message = diagnosis.message.render("en")
    assert "every llama.cpp file it needs is in its folder" in message
    assert "removed" not in message and "Protection history" not in diagnosis.next_step.render("en")
    assert "vc_redist.x64.exe" in diagnosis.next_step.render("en")


def test_unknown_folder_says_only_what_the_code_proves():
    diagnosis = diagnose(-1073741515, [], LaunchConfig(model="m.gguf", backend="llama-server"))
    assert diagnosis.cause == "missing_library"
    assert "0xC0000135" in diagnosis.message.render("en")
    assert "vc_redist.x64.exe" in diagnosis.next_step.render("en")
    assert diagnosis.action == change_settings({"backend": "embedded"})


def test_the_program_that_ran_counts_when_the_settings_leave_it_to_discovery(system32, tmp_path):
    from app.core.diagnosis import EngineFacts

    program = llama_release(tmp_path / "llama", without=("ggml-base.dll",))
    found = LaunchConfig(model="m.gguf", backend="llama-server")  # server_bin None: discovered at start
    diagnosis = diagnose(0xC0000135, [], found, engine=EngineFacts(program=str(program)))
    assert diagnosis.cause == "engine_files_missing"
    assert "ggml-base.dll" in diagnosis.message.render("en")


def test_a_library_the_build_forgot_is_named_when_windows_folders_were_searched(system32, tmp_path):
    """Andgihat/llama-cpp-mtp-turboquant-sm120-blackwell-windows#1: "This llama-server links to OpenSSL
    (libssl-4-x64.dll, libcrypto-4-x64.dll) but you don't provide it in the build"."""
    program = llama_release(tmp_path / "llama")
    write_pe(program, ["llama-server-impl.dll", "KERNEL32.dll", "libssl-4-x64.dll", "libcrypto-4-x64.dll",
                       "api-ms-win-crt-runtime-l1-1-0.dll"])
    diagnosis = diagnose(0xC0000135, [], _config(program))
    assert diagnosis.cause == "missing_library"
    en = diagnosis.message.render("en")
    assert "libssl-4-x64.dll, libcrypto-4-x64.dll" in en and "api-ms" not in en
    assert "beside llama-server.exe" in diagnosis.next_step.render("en")


def test_a_cuda_build_without_its_runtime_archive_asks_for_it(system32, tmp_path):
    program = llama_release(tmp_path / "llama-cuda")
    # a build without GGML_BACKEND_DL links its CUDA backend: ggml.dll -> ggml-cuda.dll -> cudart64_12.dll
    write_pe(program.parent / "ggml.dll", ["ggml-base.dll", "ggml-cuda.dll"])
    write_pe(program.parent / "ggml-cuda.dll", ["ggml-base.dll", "cudart64_12.dll", "cublas64_12.dll"])
    diagnosis = diagnose(0xC0000135, [], _config(program))
    assert "cudart64_12.dll" in diagnosis.message.render("en")
    assert "cudart-llama-bin-win-cuda" in diagnosis.next_step.render("en")


def test_off_windows_nothing_else_is_claimed_missing(tmp_path, monkeypatch):
    """Without system folders to search (not Windows), a DLL that is no engine file and no runtime is not judged."""
    monkeypatch.setattr(windows_dlls, "system_dirs", lambda: [])
    program = llama_release(tmp_path / "llama")
    vc_runtime(program.parent)
    assert missing_dlls(program).any is False
