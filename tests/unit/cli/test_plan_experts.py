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


@pytest.mark.slow  # writes and plans a 100 MB model (about 2 s)
def test_the_plan_suggests_every_layer_on_the_gpu_with_some_experts_in_ram(capsys, tmp_path):
    from app.core.synthetic import SyntheticSpec

    spec = SyntheticSpec(n_layers=8, n_embd=512, n_head=8, n_head_kv=2, n_expert=8, n_expert_used=2, n_ff_exp=512)
    model = str(write_model("qwen3moe", tmp_path / "moe-100mb.gguf", spec))
    args = ["plan", model, "--vram-budget", "560M", "--keep-vram", "1M", "--gpu-layers", "-1",
            "--backend", "llama-server", "--ctx", "2048"]
    main([*args, "--json"])
    data = json.loads(capsys.readouterr().out)
    suggested = data["experts"]["suggested"]
    assert suggested["gpu_layers"] == 9 and 0 < suggested["n_cpu_moe"] < 8  # all layers, some experts in RAM
    assert data["max_gpu_layers"] < 8  # whole layers alone: fewer of them fit
    main(args)
    text = capsys.readouterr().out
    assert (f"suggests: all 8 layers on the GPU, experts of {suggested['n_cpu_moe']} layers on the processor "
            f"(--gpu-layers 9 --n-cpu-moe {suggested['n_cpu_moe']})") in text
    main([*args[:-3], "embedded", "--ctx", "2048", "--json"])
    assert json.loads(capsys.readouterr().out)["experts"]["suggested"] is None  # that engine cannot place experts
