"""`gguf-launcher search TEXT [--json]` against the fake Hub: files with sizes, SHA-256 and fit verdicts, one best fit,
both languages, and each failure as one sentence (one JSON error object with --json)."""

from __future__ import annotations

import json
import subprocess
import sys

from app.cli import main
from tests.hub import fixtures
from tests.hub.fixtures import GATED, PRIVATE, TINY
from tests.model_cache import sha256_of

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names


def test_json_lists_files_with_sha256_and_verdicts(capsys, fake_hub, hub_files):
    assert main(["search", "llama", "--endpoint", fake_hub.url, "--vram-budget", "8G", "--limit", "1",
                 "--backend", "llama-server", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["endpoint"] == fake_hub.url and out["query"] == "llama" and [r["repo"] for r in out["repos"]] == [TINY]
    models = {m["name"]: m for m in out["repos"][0]["models"]}
    f16 = models["tiny-llama-F16.gguf"]
    assert f16["parts"][0]["sha256"] == sha256_of(hub_files["tiny-llama-F16.gguf"])
    assert f16["quant"] == "F16" and f16["fit"]["verdict"] == "fits_gpu" and f16["fit"]["header_bytes"] > 0
    assert models["split/tiny-llama-F16-split.gguf"]["split"] is True
    assert len(models["split/tiny-llama-F16-split.gguf"]["parts"]) == 3
    assert sum(m["fit"]["best"] for m in models.values()) == 1
    assert out["repos"][0]["projectors"][0]["path"] == "mmproj-tiny-F16.gguf"
    assert out["header_bytes"] == sum(m["fit"]["header_bytes"] for m in models.values())


def test_a_repository_name_lists_it_in_chinese(capsys, fake_hub):
    assert main(["--lang", "zh", "search", TINY, "--endpoint", fake_hub.url, "--backend", "llama-server",
                 "--vram-budget", "8G"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{TINY}\n") and "显卡放得下：全部 3 层" in out and "<- 最合适" in out
    assert "视觉投影器：mmproj-tiny-F16.gguf" in out and "个文件读取了" in out
    assert not any(r.path.startswith("/api/models?") for r in fake_hub.requests)  # named: no search


def test_gated_files_say_how_to_open_them(capsys, fake_hub):
    assert main(["search", GATED, "--endpoint", fake_hub.url, "--backend", "llama-server"]) == 0
    captured = capsys.readouterr()
    assert "tiny-llama-F16.gguf is gated or private" in captured.out
    assert "next step: Accept the license on the model's page, then paste a token." in captured.out
    assert "HF_TOKEN" in captured.err and "best fit" not in captured.out


def test_no_fit_reads_no_header(capsys, fake_hub):
    assert main(["search", TINY, "--endpoint", fake_hub.url, "--no-fit"]) == 0
    assert "tiny-llama-F16.gguf" in capsys.readouterr().out and not fake_hub.body_bytes


def test_private_repository_is_one_error_with_the_token_step(capsys, fake_hub):
    assert main(["search", PRIVATE, "--endpoint", fake_hub.url, "--json"]) == 1
    captured = capsys.readouterr()
    error = json.loads(captured.out)["error"]
    assert error["message"].startswith(f"{PRIVATE} is gated or private")
    assert error["fix"] == "Accept the license on the model's page, then paste a token."
    assert "HF_TOKEN" in captured.err


def test_nothing_found_and_rate_limited(capsys, fake_hub):
    assert main(["search", "no-such-words", "--endpoint", fake_hub.url]) == 1
    assert f"No GGUF repository on {fake_hub.url} matches “no-such-words”." in capsys.readouterr().err
    fake_hub.fault(r"^/api/models$", status=429, retry_after=30)
    assert main(["search", "llama", "--endpoint", fake_hub.url]) == 1
    assert "asks to wait 30 s" in capsys.readouterr().err


def test_modelscope_says_words_are_not_searched(capsys):
    assert main(["--lang", "en", "search", "qwen", "--source", "modelscope"]) == 1
    assert "ModelScope cannot be searched by words here" in capsys.readouterr().err


def test_building_the_parser_imports_nothing_of_the_hub():
    code = ("import sys, app.cli; app.cli.build_parser(); "
            "print([m for m in sys.modules if m.startswith(('app.core.hub', 'huggingface_hub'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"
