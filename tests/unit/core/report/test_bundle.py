"""The diagnostics report: every part is there, and no secret planted in any source reaches the zip."""

from __future__ import annotations

import getpass
import json
import socket
import zipfile

import pytest

from app.core.paths import log_dir
from app.core.problem import UserError
from app.core.report.bundle import ReportOptions, write_report
from app.core.server.diagnosis_log import record_diagnosis
from app.core.settings import load_settings
from app.core.synthetic.tiny_llama import write_tiny_llama

USER, HOST = "alicebob", "planted-host-77"
API_KEY = "PLANTED-api-key-0451"
FLAG_KEY = "PLANTED-flag-key-9931"
BEARER = "PLANTEDbearer0077xyz"
HF_TOKEN = "hf_PLANTEDplantedPLANTED1234"
ENV_KEY = "sk-PLANTEDenvironmentKEY5566"


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """A machine whose every source holds a secret: settings, environment, server log, app log, diagnoses."""
    home = tmp_path / "home" / USER
    (home / "models").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setattr(getpass, "getuser", lambda: USER)
    monkeypatch.setattr(socket, "gethostname", lambda: HOST)
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    model = write_tiny_llama(home / "models" / f"{USER}-chat.gguf")
    settings = load_settings()
    settings.remember_model(model)
    settings.update_profile(model, launch_config={"model": str(model), "api_key": API_KEY, "ctx": 512},
                            probe=None)
    settings.save()
    logs = log_dir()
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"server-{USER}-chat.log").write_text("\n".join([
        *[f"line {i} of the log" for i in range(5000)],
        f"[launcher] llama-server -m {model} --api-key {FLAG_KEY} --host {HOST} --port 8080",
        f"Authorization: Bearer {BEARER}",
        f"using token {HF_TOKEN} from the environment; OPENAI_API_KEY={ENV_KEY}",
        f"main: HTTP server is listening, hostname: {HOST}, port: 8080",
    ]) + "\n", encoding="utf-8")
    (logs / "gguf-launcher.log").write_text(f"INFO app: opened {home}/models/x.gguf as {USER}\n", encoding="utf-8")

    class Crash:
        def to_dict(self, lang=None):
            return {"cause": "oom_killed", "message": f"{USER}'s server died", "evidence": [f"--api-key {FLAG_KEY}"]}

    record_diagnosis(Crash(), model=str(model), log_name=f"server-{USER}-chat.log")
    return {"home": str(home), "model": model}


def _read(path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name).decode("utf-8") for name in archive.namelist()}


def test_no_planted_secret_reaches_the_zip(planted, tmp_path):
    result = write_report(ReportOptions(out=tmp_path / "out" / "report.zip"))
    files = _read(result.path)
    assert set(files) == set(result.files) and not result.problems, result.problems
    everything = "\n".join(f"{name}\n{text}" for name, text in files.items())
    for secret in (API_KEY, FLAG_KEY, BEARER, HF_TOKEN, ENV_KEY, USER, HOST, planted["home"]):
        assert secret not in everything, f"{secret!r} reached the report"
    # what stands in their place, so a helper still reads the lines
    server_log = files["logs/server-<user>-chat.log"]
    assert "--api-key <secret> --host <host>" in server_log and "Bearer <secret>" in server_log
    assert "-m ~/models/<user>-chat.gguf" in server_log


def test_every_part_is_there_and_logs_are_cut_to_their_last_lines(planted, tmp_path):
    result = write_report(ReportOptions(out=tmp_path / "report.zip", log_lines=1000))
    files = _read(result.path)
    assert {"README.txt", "scan.json", "engine.json", "settings.json", "doctor.json", "plan.json", "probe.json",
            "diagnoses.json", "logs/gguf-launcher.log"} <= set(files), sorted(files)
    assert json.loads(files["scan.json"])["ram_total_bytes"] > 0
    assert json.loads(files["doctor.json"])["status"] == "ok"
    plan = json.loads(files["plan.json"])
    assert plan["config"]["ctx"] == 512 and plan["config"]["api_key"] == "<secret>" and plan["plan"]["devices"]
    assert json.loads(files["diagnoses.json"])[-1]["cause"] == "oom_killed"
    server_log = files["logs/server-<user>-chat.log"].splitlines()
    assert len(server_log) == 1000 and server_log[0] == "line 4004 of the log"
    assert server_log[-1] == "main: HTTP server is listening, hostname: <host>, port: 8080"
    assert "scan.json" in files["README.txt"] and "<secret>" in files["README.txt"]


def test_host_names_stay_when_asked(planted, tmp_path):
    files = _read(write_report(ReportOptions(out=tmp_path / "r.zip", keep_host_names=True)).path)
    assert HOST in files["logs/server-<user>-chat.log"] and FLAG_KEY not in files["logs/server-<user>-chat.log"]


def test_a_model_that_is_gone_is_listed_as_missing_and_the_rest_is_written(planted, tmp_path):
    planted["model"].unlink()
    result = write_report(ReportOptions(out=tmp_path / "r.zip"))
    files = _read(result.path)
    assert "scan.json" in files and "logs/gguf-launcher.log" in files
    assert "doctor.json" in files and json.loads(files["doctor.json"])["status"] == "error"
    assert "plan.json" not in files


def test_an_unwritable_place_is_a_sentence_and_leaves_nothing(planted, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(UserError) as raised:
        write_report(ReportOptions(out=blocker / "report.zip"))
    assert "could not be written" in raised.value.message.render("en") and raised.value.next_step is not None
    assert blocker.read_text() == "not a folder" and list(tmp_path.glob("**/*.zip")) == []
