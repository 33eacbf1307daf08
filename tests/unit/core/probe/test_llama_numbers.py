"""The plan beside llama.cpp's own table (app/core/probe/llama_numbers.py), on a table recorded from the real
llama-server (tests/data/llama_report/smollm2-q41.log: SmolLM2 Q4_1, -c 8192, 2 sequences of 4096 cells)."""

from __future__ import annotations

from app.core.hardware.scan import scan_hardware
from app.core.launch.config import LaunchConfig
from app.core.plan.llama_report import parse_llama_log
from app.core.plan.memory import make_plan
from app.core.probe.llama_numbers import SideBySide, compare
from app.core.synthetic.tiny_llama import write_tiny_llama
from tests.paths import ROOT

RECORDED = ROOT / "tests" / "data" / "llama_report" / "smollm2-q41.log"


def test_the_plan_is_set_beside_llama_cpps_host_row(tmp_path):
    from app.core.gguf.reader import read_model_info

    report = parse_llama_log(RECORDED.read_text(encoding="utf-8").splitlines())
    model = write_tiny_llama(tmp_path / "m.gguf")
    plan = make_plan(read_model_info(model), LaunchConfig(model=str(model), ctx=512), scan_hardware())
    side = compare(plan, report)
    assert side.llama_mib == 92 + 180 + 18 and side.parts["context"][1] == 180
    ram = plan.device("RAM")
    assert side.plan_mib * 1024 * 1024 == ram.weights_bytes + ram.kv_bytes + ram.compute_bytes
    assert side.to_dict()["llama_cpp_mib"] == 290.0


def test_disagreement_is_beyond_ten_percent_after_the_tables_rounding():
    parts = {"model": (0, 0), "context": (0, 0), "compute": (0, 0)}
    assert not SideBySide(318.0, 290.0, parts).disagrees  # +9.7 %
    assert not SideBySide(321.0, 290.0, parts).disagrees  # +10.7 %, within 10 % + 3 MiB of rounding
    assert SideBySide(330.0, 290.0, parts).disagrees and SideBySide(250.0, 290.0, parts).disagrees
    assert SideBySide(14.3, 12.0, parts).difference > 0.18 and not SideBySide(14.3, 12.0, parts).disagrees


def test_no_table_no_comparison(tmp_path):
    from app.core.gguf.reader import read_model_info

    model = write_tiny_llama(tmp_path / "m.gguf")
    plan = make_plan(read_model_info(model), LaunchConfig(model=str(model), ctx=512), scan_hardware())
    assert compare(plan, parse_llama_log(["main: loading model"])) is None
