"""`gguf-launcher doctor`: exit codes, JSON keys, plain sentences (never tracebacks)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

from app.cli import main


def _doctor_json(capsys, *args) -> tuple[int, dict]:
    code = main(["doctor", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_json_has_the_promised_keys(capsys, tiny_model):
    code, doc = _doctor_json(capsys, str(tiny_model))
    assert code == 0
    assert doc["hardware"]["ram_total_bytes"] > 0 and isinstance(doc["hardware"]["gpus"], list)
    model = doc["model"]
    assert model["architecture"] == "llama" and model["block_count"] == 2 and model["file_type"] == 0
    assert model["tensor_types"]["F32"]["count"] == 21
    assert model["sha256"] == hashlib.sha256(tiny_model.read_bytes()).hexdigest()
    assert "tokenizer.chat_template" not in model["metadata"]
    for check in doc["checks"]:
        assert set(check) >= {"id", "status", "message"} and check["status"] in ("ok", "warning", "error")
    assert {"magic", "truncation", "quant_types", "sha256"} <= {c["id"] for c in doc["checks"]}


def test_sha256_mismatch_is_an_error(capsys, tiny_model):
    code, doc = _doctor_json(capsys, str(tiny_model), "--sha256", "ab" * 32)
    assert code == 1
    assert next(c for c in doc["checks"] if c["id"] == "sha256")["status"] == "error"


def test_truncated_model_exits_1(capsys, tmp_path, tiny_model):
    path = tmp_path / "cut.gguf"
    path.write_bytes(tiny_model.read_bytes()[:200_000])
    code, doc = _doctor_json(capsys, str(path), "--no-sha256")
    assert code == 1
    assert "data is not within the file bounds" in next(c for c in doc["checks"] if c["id"] == "truncation")["message"]


def test_missing_llama_server_is_a_warning_not_a_crash(capsys, tiny_model, tmp_path):
    code, doc = _doctor_json(capsys, str(tiny_model), "--backend", "llama-server",
                             "--server-bin", str(tmp_path / "no-such-llama-server"), "--no-sha256")
    assert code == 0
    assert doc["checks"][0]["id"] == "backend" and doc["checks"][0]["status"] == "warning"


def _cli(*args, home) -> subprocess.CompletedProcess:
    env = dict(os.environ, GGUF_LAUNCHER_HOME=str(home), GGUF_LAUNCHER_LANG="en")
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, env=env, timeout=60)


def test_not_a_gguf_file_gives_a_sentence_and_exit_1(tmp_path, app_home):
    path = tmp_path / "notes.txt"
    path.write_text("just some text, not a model")
    result = _cli("doctor", str(path), home=app_home)
    assert result.returncode == 1
    assert "not a GGUF model file" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_human_text_for_a_good_model_and_chinese(tiny_model, app_home):
    result = _cli("--lang", "zh", "doctor", str(tiny_model), home=app_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tiny-random-llama" in result.stdout and "[ok  ]" in result.stdout and "[FAIL]" not in result.stdout
    assert "该文件是 GGUF 模型" in result.stdout


def test_usage_error_exits_2(app_home):
    result = _cli("doctor", home=app_home)
    assert result.returncode == 2 and "Traceback" not in result.stderr
