"""The engine self-test on the real engines: quantized models made by llama.cpp's quantizer load and generate."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.core.engine import report, selftest
from app.core.engine.selftest import SELFTEST_QUANTS, EngineCheck, Outcome, QuantResult
from app.core.problem import Fix, Status, fix_action


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=timeout)


def test_engine_check_reports_every_quant_type_running_on_the_builtin_engine():
    done = cli("engine-check", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] is True
    (engine,) = result["engines"]
    assert [r["quant"] for r in engine["results"]] == list(SELFTEST_QUANTS)
    assert all(r["outcome"] == "runs" for r in engine["results"])
    assert "runs quantized models on this processor" in engine["check"]["message"]


@pytest.mark.slow
def test_builtin_engine_check_really_runs_and_is_cached_per_build():
    check = selftest.run_embedded_check(use_cache=False)
    assert check.ok, check.to_dict()
    assert all("tokens" in r.detail for r in check.results)
    assert selftest.cached("embedded").to_dict() == check.to_dict()


@pytest.mark.slow
def test_llama_server_engine_check_runs_every_quant_type(llama_server_bin):
    done = cli("engine-check", "--server-bin", llama_server_bin, "--again", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    (engine,) = json.loads(done.stdout)["engines"]
    assert engine["engine"] == "llama-server"
    assert [r["outcome"] for r in engine["results"]] == ["runs"] * len(SELFTEST_QUANTS)


def test_a_damaged_model_is_a_failure_of_that_file_not_of_the_test(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    (result,) = selftest._check_embedded({"Q4_0": bad})
    assert result.outcome is Outcome.FAILED and result.detail


def test_an_engine_killed_by_sigill_gets_the_rebuild_row():
    check = EngineCheck("embedded", "b", "c", (QuantResult("Q4_0", Outcome.CRASHED, "killed by SIGILL"),
                                                 QuantResult("Q8_0", Outcome.RUNS, "4 tokens")), 1.0, 0.0)
    row = report.check_row(check, "embedded")
    assert row.status is Status.ERROR
    assert row.action == fix_action(Fix.REBUILD_ENGINE, engine="embedded")
    assert "Q4_0: crashed — killed by SIGILL" in row.evidence
    assert "Rebuild" in row.next_step.render("en") and row.next_step.render("zh")


def test_no_result_yet_is_a_warning_that_offers_the_test():
    row = report.check_row(None, "embedded")
    assert row.status is Status.WARNING and row.action.kind is Fix.TEST_ENGINE


def test_doctor_includes_the_engine_row(tiny_model):
    done = cli("doctor", str(tiny_model), "--no-sha256", "--json")
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["engine_runs"]["status"] == "ok"
