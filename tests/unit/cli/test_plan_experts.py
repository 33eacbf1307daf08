"""`gguf-launcher plan --n-cpu-moe N` on a mixture-of-experts file: the experts of the first N layers are planned in
RAM, not on the (simulated 8 GB) GPU, and --json says how much that is; a dense model has no experts block."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.synthetic import write_model


def _plan(capsys, *args: str) -> dict:
    code = main(["plan", *args, "--vram-budget", "8G", "--gpu-layers", "-1", "--backend", "llama-server", "--json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_experts_move_to_ram_and_json_says_how_much(capsys, tmp_path):
    model = str(write_model("qwen3moe", tmp_path / "moe.gguf"))
    plain, moved = _plan(capsys, model), _plan(capsys, model, "--n-cpu-moe", "1")
    gpu = {d["device"]: d["weights_bytes"] for d in plain["devices"]}
    gpu_moved = {d["device"]: d["weights_bytes"] for d in moved["devices"]}
    kept = moved["experts"]["kept_in_ram_bytes"]
    assert kept == moved["experts"]["per_layer"][0][0] > 0 and moved["experts"]["n_cpu_moe"] == 1
    assert gpu["GPU 0"] - gpu_moved["GPU 0"] == kept and gpu_moved["RAM"] - gpu["RAM"] == kept
    assert plain["experts"]["kept_in_ram_bytes"] == 0


def test_a_dense_model_has_no_experts_block_and_a_negative_count_is_a_usage_error(capsys, tiny_model):
    assert _plan(capsys, str(tiny_model))["experts"] is None
    with pytest.raises(SystemExit) as exit_info:  # argparse usage error
        main(["plan", str(tiny_model), "--n-cpu-moe", "-2"])
    assert exit_info.value.code == 2 and "must be 0 or more" in capsys.readouterr().err
