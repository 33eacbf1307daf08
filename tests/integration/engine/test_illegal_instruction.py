"""SIGILL explained truly: the engine's system_info line says what it was built for, the probe what runs here.

The llama-server case uses the fake server (a real SIGILL: it executes the instructions of an extension this
processor cannot run, after printing the system_info line a build for that extension prints)."""

from __future__ import annotations

import pytest

from app.core.diagnosis import diagnose
from app.core.engine import cpu_isa, isa_cache
from app.core.launch.config import LaunchConfig
from app.core.problem import Fix, FixAction, change_settings
from app.core.server.crash import engine_facts
from app.core.server.supervisor import State, Supervisor

pytestmark = pytest.mark.skipif(not cpu_isa.can_probe(), reason="the probe runs x86-64 code on Linux only")


@pytest.fixture
def unusable_extension():
    """A ggml system_info name of an extension this processor cannot run (most CPUs lack some AVX-512 part)."""
    report = isa_cache.current_report()
    for info_name, name in cpu_isa.SYSTEM_INFO_NAMES.items():
        if report.verdicts.get(name) in (cpu_isa.Verdict.FAULTS, cpu_isa.Verdict.NOT_ADVERTISED):
            return info_name, cpu_isa.label(name)
    pytest.skip("this processor runs every extension llama.cpp can use: no illegal instruction to provoke")


def system_info(extension: str) -> str:
    return ("system_info: n_threads = 1 (n_threads_batch = 1) / 2 | CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | "
            f"{extension} = 1 | OPENMP = 1 |")


def test_embedded_engine_built_for_a_missing_extension_gets_the_rebuild_fix(unusable_extension):
    info_name, label = unusable_extension
    lines = [system_info(info_name), "llama_model_loader: loaded meta data", "Illegal instruction (core dumped)"]
    result = diagnose(-4, lines, LaunchConfig(model="m.gguf", backend="embedded"), engine=engine_facts(-4))
    assert result.cause == "illegal_instruction"
    assert label in result.message.render("en") and label in result.message.render("zh")
    assert result.action == FixAction(Fix.REBUILD_ENGINE, {"engine": "embedded"})
    assert "Rebuild" in result.next_step.render("en")


def test_sigill_without_system_info_keeps_the_general_sentence():
    result = diagnose(-4, ["Illegal instruction"], LaunchConfig(model="m.gguf", backend="llama-server"))
    assert result.cause == "illegal_instruction"
    assert "processor feature" in result.message.render("en")
    assert result.action == change_settings({"backend": "embedded"})


@pytest.mark.slow
def test_llama_server_dying_of_a_real_sigill_is_explained(unusable_extension, fake_server_bin, tiny_model,
                                                           monkeypatch):
    info_name, label = unusable_extension
    monkeypatch.setenv("FAKE_LLAMA_FEATURE", info_name)
    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=fake_server_bin("sigill"),
                          ctx=512, port=0)
    supervisor = Supervisor(config, auto_restart=False)
    try:
        supervisor.start()
        assert supervisor.wait_for({State.FAILED}, 60) is State.FAILED
        result = supervisor.last_diagnosis
        assert result.cause == "illegal_instruction", result
        message = result.message.render("en")
        assert label in message and "SIGILL" not in message
        assert result.action == change_settings({"backend": "embedded"})
    finally:
        supervisor.close()
