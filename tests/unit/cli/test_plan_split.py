"""`plan` and `serve` with several GPUs: --tensor-split / --split-mode / --main-gpu, per-GPU numbers in --json."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from tests.unit.core.plan.test_gpu_split import two_gpu_report


@pytest.fixture
def two_cards(monkeypatch):
    monkeypatch.setattr("app.core.hardware.scan.scan_hardware", lambda *a, **k: two_gpu_report())


def _plan(capsys, *args: str) -> tuple[int, str]:
    code = main(["plan", *args])
    return code, capsys.readouterr().out


def test_json_has_each_gpus_numbers_shares_and_a_proposal(capsys, tiny_model, two_cards):
    code, out = _plan(capsys, str(tiny_model), "--json", "--tensor-split", "3,1")
    data = json.loads(out)
    assert code == 0 and data["gpu_shares"] == [3.0, 1.0] and len(data["proposed_tensor_split"]) == 2
    gpus = [d for d in data["devices"] if d["kind"] == "gpu"]
    assert [d["uuid"] for d in gpus] == ["GPU-0", "GPU-1"]
    assert all({"layer_ranges", "free_bytes", "total_bytes", "spare_bytes"} <= set(d) for d in gpus)
    assert any(s.startswith("Layers ") for s in data["summary"])


def test_text_output_says_the_split_and_proposes_one(capsys, tiny_model, two_cards):
    code, out = _plan(capsys, str(tiny_model), "--split-mode", "none", "--main-gpu", "1")
    assert code == 0 and "on GPU 1 (NVIDIA GeForce RTX 3060)" in out and "--tensor-split" in out


@pytest.mark.parametrize("args, message", [
    (["--tensor-split", "a,b"], "not a list of shares"), (["--tensor-split", "0,0"], "one of them above 0"),
    (["--tensor-split", "1,-1"], "0 or more"), (["--split-mode", "diagonal"], "invalid choice"),
    (["--main-gpu", "-1"], "must be 0 or more"),
])
def test_bad_split_arguments_are_usage_errors(capsys, tiny_model, args, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["plan", str(tiny_model), *args])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_serve_reads_the_split_into_its_launch_config(tiny_model):
    import argparse

    from app.cli import serve

    parser = argparse.ArgumentParser()
    serve.add_parser(parser.add_subparsers())
    args = parser.parse_args(["serve", str(tiny_model), "--tensor-split", "1/2", "--split-mode", "row",
                              "--main-gpu", "1"])
    config = serve.config_from_args(args)
    assert (config.tensor_split, config.split_mode, config.main_gpu) == ((1.0, 2.0), "row", 1)
