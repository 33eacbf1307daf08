"""llama.cpp's own numbers beside the plan (issue 12): the real llama-server loads the model once with -lv 4 and
the plan is compared with its memory table on the same terms; within 10 % on SmolLM2 and the generated models."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.gguf.reader import read_model_info
from app.core.hardware.scan import scan_hardware
from app.core.launch.config import LaunchConfig
from app.core.plan.memory import make_plan
from app.core.probe.llama_numbers import compare, llama_cpp_report


@pytest.mark.parametrize("arch", ["gemma3", "qwen3moe", "llama"])
def test_the_plan_agrees_with_llama_cpps_own_table(arch, quantized_models, llama_server_bin):
    model = quantized_models(arch, "Q4_K_M")
    config = LaunchConfig(model=str(model), backend="llama-server", server_bin=llama_server_bin, ctx=4096,
                          threads=1)
    report = llama_cpp_report(config)
    assert report is not None and report.latest is not None and report.latest.phase == "exit", report
    side = compare(make_plan(read_model_info(model), config, scan_hardware()), report)
    print(f"{arch}: plan {side.plan_mib:.1f} MiB, llama.cpp {side.llama_mib:.1f} MiB ({100 * side.difference:+.1f} %)")
    assert not side.disagrees, side.to_dict()


def test_plan_json_carries_both(capsys, smollm2_model, llama_server_bin):
    code = main(["plan", str(smollm2_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--ctx", "4096", "--llama-cpp", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["devices"] and out["llama_cpp"]["side_by_side"]["llama_cpp_mib"] > 150
    side = out["llama_cpp"]["side_by_side"]
    assert abs(side["difference_percent"]) <= 10 and not side["disagrees"], side
    assert out["llama_cpp"]["kv_mib"] == pytest.approx(90.0, abs=0.01)  # 30 layers x 4096 cells x 3 heads x 64 x 2 x 2
