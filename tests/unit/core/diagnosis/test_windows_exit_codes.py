"""Windows exit codes as the field reports them, each told in one sentence with its next step and fix as data.

Recordings (tests/data/windows/) and the public threads they come from:
- ollama_4795_illegal_instruction.txt — ollama/ollama#4795 ("Error: llama runner process has terminated: exit status
  0xc000001d").
- jamepeng_57_illegal_instruction.txt — JamePeng/llama-cpp-python#57 ("OSError: [WinError -1073741795] Windows Error
  0xc000001d", a cu128 wheel built for AVX-512 on a Ryzen without it).
- jamepeng_161_entry_point.txt — JamePeng/llama-cpp-python#161 ("Windows fatal exception: code 0xc0000139", ggml.dll:
  "[WinError 127] 找不到指定的程序。").
- ollama_11418_ggml_assert.txt — ollama/ollama#11418 (exit status 0xc0000409 and "GGML_ASSERT(tensor->op ==
  GGML_OP_UNARY) failed").
- rvc_2821_app_control.txt — RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2821 ("OSError: [WinError 4551] An
  application control policy has blocked this file.").
- fancontrol_3782_app_control.txt — Rem0o/FanControl.Releases#3782 (Smart App Control: "An Application Control policy
  has blocked this file. (0x800711C7)"); adultmm/AdultMediaManager#158 ("Smart App Control does not support per-app
  exceptions").
- winget_exit_code_table.txt — microsoft/winget-pkgs#287472 (0xC0000409 = -1073740791 = 3221226505, the decimal LM
  Studio prints as exitCode=...); lmstudio-ai/lmstudio-bug-tracker#1057 "(Exit code: 18446744072635812000)".
- 0xC0000005: lmstudio-ai/lmstudio-bug-tracker#1664 ("0xC0000005: Access violation reading location 0x02FB2000").
- "os error 4551": Rust's spelling of Win32 error 4551, written the way llamastash#30 shows "(os error 10013)"; no
  thread with that exact text was found. 0xC0E90002 (STATUS_SYSTEM_INTEGRITY_POLICY_VIOLATION, the NTSTATUS of the
  same refusal) is from Microsoft's ntstatus.h, not from a thread.
- Exit 0 before /health answers: recorded from llama-server's behaviour (a child that exits 0 while loading); no
  thread quoted.
"""

from __future__ import annotations

import pytest

from app.core.diagnosis import decode_exit_status, diagnose
from app.core.launch.config import LaunchConfig
from app.core.problem import Fix, change_settings
from tests.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "windows"


def lines(name: str) -> list[str]:
    return (RECORDINGS / name).read_text(encoding="utf-8").splitlines()


def config(**changes) -> LaunchConfig:
    return LaunchConfig(model="C:/models/m.gguf", **changes)


def both(text) -> tuple[str, str]:
    return text.render("en"), text.render("zh")


@pytest.mark.parametrize(("spelling", "code"), [
    ("exit status 0xc000001d", 0xC000001D), ("exit status 0xc0000409", 0xC0000409), ("exitCode=3221226505", 0xC0000409),
    (-1073740791, 0xC0000409), ("(Exit code: 18446744072635812000)", 0xC0000409), ("0xc0000139", 0xC0000139),
    (-1073741511, 0xC0000139), (3236495362, 0xC0E90002), ("0xC0E90002", 0xC0E90002), (-1058471934, 0xC0E90002),
    (0xC0000005, 0xC0000005),
])
def test_recorded_spellings_decode_to_the_windows_status(spelling, code):
    status = decode_exit_status(spelling)
    assert status.exit_code == code and status.signal is None
    assert f"0x{code:08X}" in status.meaning.render("en") and f"0x{code:08X}" in status.meaning.render("zh")


def test_winget_table_spellings_agree():
    table = "\n".join(lines("winget_exit_code_table.txt"))
    assert "| C0000409 | -1073740791 | 3221226505 |" in table
    assert decode_exit_status(3221226505) == decode_exit_status(-1073740791)


def test_illegal_instruction_of_an_external_build_offers_the_builtin_engine():
    recorded = lines("ollama_4795_illegal_instruction.txt")[0]
    diagnosis = diagnose(recorded.rsplit(" ", 1)[1], recorded, config(backend="llama-server", server_bin="C:/l/x.exe"))
    assert diagnosis.cause == "illegal_instruction"
    assert "AVX" in diagnosis.message.render("en")
    assert diagnosis.action == change_settings({"backend": "embedded"})
    assert diagnosis.restartable is False


def test_illegal_instruction_in_the_builtin_engines_traceback_is_told_although_python_exits_1():
    diagnosis = diagnose(1, lines("jamepeng_57_illegal_instruction.txt"), config())
    assert diagnosis.cause == "illegal_instruction"
    assert "Windows Error 0xc000001d" in diagnosis.evidence[0]


def test_illegal_instruction_of_the_builtin_engine_built_here_offers_the_rebuild():
    from app.core.diagnosis import EngineFacts

    diagnosis = diagnose(0xC000001D, [], config(), engine=EngineFacts(builtin_built_here=True))
    assert diagnosis.action is not None and diagnosis.action.kind is Fix.REBUILD_ENGINE


def test_entry_point_not_found_is_a_dll_of_another_version():
    for code, log in ((0xC0000139, []), (1, lines("jamepeng_161_entry_point.txt")),
                      (1, ["RuntimeError: Failed to load shared library 'C:\\py\\llama_cpp\\lib\\ggml.dll': "
                           "[WinError 127] 找不到指定的程序。"])):
        diagnosis = diagnose(code, log, config(backend="llama-server"))
        assert diagnosis.cause == "dll_version", log
        en, zh = both(diagnosis.message)
        assert "another version" in en and "0xC0000139" in en and "版本" in zh
        assert diagnosis.restartable is False
    named = diagnose(1, ["RuntimeError: Failed to load shared library 'C:\\py\\llama_cpp\\lib\\ggml.dll': "
                         "[WinError 127] The specified procedure could not be found"], config())
    assert "ggml.dll" in named.message.render("en")


def test_fail_fast_reads_the_ggml_assert_line_as_its_evidence():
    log = lines("ollama_11418_ggml_assert.txt")
    diagnosis = diagnose("exit status 0xc0000409", log, config())
    assert diagnosis.exit_code == 0xC0000409
    assert diagnosis.cause == "assertion_failed"
    assert "GGML_ASSERT(tensor->op == GGML_OP_UNARY) failed" in diagnosis.evidence[0]
    assert "internal check" in diagnosis.message.render("en")


def test_fail_fast_without_a_log_line_is_a_crash_with_its_meaning():
    diagnosis = diagnose(3221226505, [], config(gpu_layers=0))
    assert diagnosis.cause == "crashed"
    assert "0xC0000409" in diagnosis.message.render("en")


def test_access_violation_is_a_crash_in_plain_words():
    diagnosis = diagnose(0xC0000005, ["srv  update_slots: all slots are idle"], config(gpu_layers=10))
    assert diagnosis.cause == "crashed"
    assert "access violation" in diagnosis.message.render("en") and "访问冲突" in diagnosis.message.render("zh")
    assert diagnosis.signal is None


@pytest.mark.parametrize(("code", "log"), [
    (1, lines("rvc_2821_app_control.txt")),
    (0xE0434352, lines("fancontrol_3782_app_control.txt")),
    (1, ["Error: could not load ggml-cuda.dll (os error 4551)"]),
    (0xC0E90002, []),
    (-1058471934, []),
])
def test_smart_app_control_says_there_is_no_exception_and_what_the_user_can_do(code, log):
    diagnosis = diagnose(code, log, config(backend="llama-server"))
    assert diagnosis.cause == "app_control_blocked"
    en, zh = both(diagnosis.message)
    assert "Smart App Control" in en and "no exception for a single app" in en
    assert "智能应用控制" in zh
    step = diagnosis.next_step.render("en")
    assert "signed" in step and "Smart App Control settings" in step
    assert diagnosis.restartable is False


def test_the_blocked_file_is_named_when_the_log_names_it():
    diagnosis = diagnose(1, lines("fancontrol_3782_app_control.txt"), config())
    assert "FanControl.Resources.dll" in diagnosis.message.render("en")


def test_exit_0_before_the_health_check_answered():
    log = ["main: loading model", "llama_model_loader: loaded meta data with 30 key-value pairs"]
    diagnosis = diagnose(0, log, config(), was_ready=False)
    assert diagnosis.cause == "exited_early"
    en, zh = both(diagnosis.message)
    assert "before it answered its first health check" in en and "健康检查" in zh
    assert "copied command line" in diagnosis.next_step.render("en")
    served = diagnose(0, ["main: server is listening on http://127.0.0.1:8080 - starting the main loop"], config())
    assert "health check" not in served.message.render("en")  # one that served is not said to have never answered
