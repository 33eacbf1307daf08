"""`gguf-launcher get REPO` against the fake Hub: downloads, verifies and checks a model (a real CLI process), a
second run fetches nothing, Ctrl+C pauses and the same command continues, a real small filesystem refuses in one
sentence, and every failure is one sentence (one JSON error object with --json)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from tests.hub import fixtures
from tests.hub.fixtures import GATED, TINY
from tests.model_cache import sha256_of

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names
ROOT = Path(__file__).resolve().parents[3]


def _models_folder() -> Path:
    return Path(os.environ["GGUF_LAUNCHER_HOME"]) / "data" / "models"


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False, **kwargs)


def _cdn_gets(hub) -> int:
    return sum(1 for r in hub.requests if r.method == "GET" and r.path.startswith("/cdn/"))


@pytest.mark.slow
def test_get_downloads_verifies_and_checks_the_model(fake_hub, hub_files):
    done = _cli("--lang", "en", "get", TINY, "--endpoint", fake_hub.url, "--quant", "F16", "--backend", "embedded")
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path == _models_folder() / "test" / "tiny-llama-GGUF" / "tiny-llama-F16.gguf"
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F16.gguf"])
    assert "Downloading tiny-llama-F16.gguf (233.7 KiB) from test/tiny-llama-GGUF." in done.stderr
    assert f"[ok  ] SHA-256 matches the value {fake_hub.url} publishes." in done.stderr
    assert "Ready to open" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in path.parent.iterdir()) == ["tiny-llama-F16.gguf"]  # no .part left
    again = _cli("get", TINY, "--endpoint", fake_hub.url, "--quant", "F16", "--backend", "embedded", "--json")
    out = json.loads(again.stdout)
    assert again.returncode == 0 and out["path"] == str(path) and out["already_had"] is True
    assert out["received_bytes"] == 0 and out["verified"] is True and out["status"] != "error"
    assert _cdn_gets(fake_hub) == 1  # the second run fetched nothing


@pytest.mark.slow
def test_json_names_a_shard_and_gets_the_whole_split_model(capsys, fake_hub, hub_files, tmp_path):
    assert main(["get", TINY, "--endpoint", fake_hub.url, "--file", "tiny-llama-F16-split-00002-of-00003.gguf",
                 "--folder", str(tmp_path / "m"), "--backend", "embedded", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["path"].endswith("tiny-llama-F16-split-00001-of-00003.gguf") and len(out["parts"]) == 3
    assert out["received_bytes"] == sum(p["size"] for p in out["parts"])
    sha = next(c for c in out["checks"] if c["id"] == "sha256")
    assert sha["status"] == "ok" and sha["message"].endswith("publishes (all 3 parts).")
    folder = Path(out["path"]).parent
    assert sorted(p.name for p in folder.iterdir()) == [f"tiny-llama-F16-split-0000{i}-of-00003.gguf"
                                                        for i in (1, 2, 3)]


def test_failures_are_one_sentence(capsys, fake_hub, tmp_path):
    folder = ["--folder", str(tmp_path / "m")]
    assert main(["--lang", "en", "get", TINY, "--endpoint", fake_hub.url, "--quant", "Q9_K", *folder]) == 1
    err = capsys.readouterr().err
    assert "error: No GGUF model in test/tiny-llama-GGUF matches “Q9_K”; it has: tiny-llama-F32.gguf, " in err
    assert "next step: Choose one with --file NAME or --quant Q." in err
    assert main(["--lang", "en", "get", GATED, "--endpoint", fake_hub.url, "--quant", "F16", *folder]) == 1
    err = capsys.readouterr().err
    assert "error: tiny-llama-F16.gguf is gated or private" in err and "HF_TOKEN" in err
    assert main(["--lang", "en", "get", TINY, "--source", "modelscope", "--endpoint", fake_hub.url, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["message"] == f"{TINY} was not found on ModelScope (404)."
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").rglob("*.gguf*"))


@pytest.mark.slow
def test_ctrl_c_pauses_and_the_same_command_continues(fake_hub, hub_files, tmp_path):
    fault = fake_hub.fault(r"^/cdn/", bytes_per_s=100_000)
    command = [sys.executable, "-m", "app", "--lang", "en", "get", TINY, "--endpoint", fake_hub.url, "--quant",
               "F32", "--folder", str(tmp_path), "--backend", "embedded"]
    partial = tmp_path / "test" / "tiny-llama-GGUF" / "tiny-llama-F32.gguf.part"
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        deadline = time.monotonic() + 60
        while not (partial.exists() and partial.stat().st_size >= 50_000):
            assert child.poll() is None and time.monotonic() < deadline, "the download never started"
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    kept = partial.stat().st_size
    assert "Paused: " in err and "Run the same command again to continue." in err and out == ""
    assert 50_000 <= kept < hub_files["tiny-llama-F32.gguf"].stat().st_size
    fake_hub.faults.remove(fault)
    done = _cli(*command[3:], "--json")
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["reread_bytes"] == kept
    assert result["received_bytes"] == hub_files["tiny-llama-F32.gguf"].stat().st_size - kept
    assert sha256_of(Path(result["path"])) == sha256_of(hub_files["tiny-llama-F32.gguf"])


def _can_mount_tmpfs(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None or sys.platform != "linux":
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {tmp_path}"],
                           capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


@pytest.mark.slow
def test_a_real_small_filesystem(fake_hub, tmp_path):
    """A 1 MiB tmpfs mounted at the models folder (a private mount namespace, so nothing outlives the test): the
    space check refuses at once; with the check told a wrong free space (another program filled the disk after it
    was read), the write fails and the partial is removed."""
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("this kernel does not let an unprivileged user mount a tmpfs (unshare -rm); the space check "
                    "with an injected free-space reading is in tests/unit/core/hub/test_download.py")
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = f"mount -t tmpfs -o size=100k tmpfs {disk} && "
    cli = [sys.executable, "-m", "app", "--lang", "en", "get", TINY, "--endpoint", fake_hub.url, "--quant", "F16",
           "--folder", str(disk)]
    refused = subprocess.run(["unshare", "-rm", "sh", "-c", mount + 'exec "$@"', "sh", *cli], cwd=ROOT,
                             capture_output=True, text=True, timeout=120, check=False)
    assert refused.returncode == 1
    assert ("error: Downloading tiny-llama-F16.gguf needs 100.2 MiB free in " in refused.stderr
            and "(233.7 KiB for the model and 100.0 MiB to spare), but only 100.0 KiB is free." in refused.stderr)
    script = ("import sys\nfrom pathlib import Path\nfrom app.core.hub.client import list_files\n"
              "from app.core.hub.download import download_model\nfrom app.core.hub.source import HubAccess\n"
              "from app.core.hub.errors import HubError\n"
              f"access = HubAccess(endpoint={fake_hub.url!r})\n"
              f"model = next(m for m in list_files({TINY!r}, access).models if m.quant == 'F16' and not m.is_split)\n"
              "try:\n"
              f"    download_model(model, access, folder=Path({str(disk)!r}), free=lambda p: 1 << 40)\n"
              "except HubError as error:\n"
              "    print(error.message.render('en'))\n"
              f"print(sorted(str(p) for p in Path({str(disk)!r}).rglob('*') if p.is_file()))\n")
    full = subprocess.run(["unshare", "-rm", "sh", "-c", mount + 'exec "$@"', "sh", sys.executable, "-c", script],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    lines = full.stdout.splitlines()
    assert lines[0].startswith("Writing tiny-llama-F16.gguf in ") and lines[0].endswith(
        "failed (No space left on device); the partial download was removed."), full.stdout + full.stderr
    assert lines[1] == "[]"
