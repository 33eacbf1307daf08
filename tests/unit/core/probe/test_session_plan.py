"""The probe takes the plan and the engine the window's model session already made for the config, instead of
making them again; a probe that judges other budgets plans for them itself."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig
from app.core.plan.memory import make_plan
from app.core.probe import Attempt, ProbeOptions, run_probe
from app.core.probe import probe as probe_module
from app.core.probe.sim_card import SIM_CUDA_BACKEND, simulated_gpu_report
from tests.unit.core.plan.test_plan import make_info

GiB = 1024**3


def _counting_plans(monkeypatch) -> list:
    made = []

    def counted(*args, **kwargs):
        made.append(args[1])
        return make_plan(*args, **kwargs)

    monkeypatch.setattr(probe_module, "make_plan", counted)
    return made


def _fits(config: LaunchConfig, _limits, _cancel) -> Attempt:
    return Attempt(config.gpu_layers, config.ctx, ok=True)


def test_the_sessions_plan_is_used_and_other_budgets_are_planned_again(tmp_path, monkeypatch):
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    info = make_info(path=str(tmp_path / "m.gguf"))
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=2048)
    hw = simulated_gpu_report(8 * GiB)
    plan = make_plan(info, config, hw)
    made = _counting_plans(monkeypatch)
    result = run_probe(info, config, hw, ProbeOptions(use_cache=False), backend=SIM_CUDA_BACKEND, plan=plan,
                       runner=_fits)
    assert made == [] and result.recommendation is not None
    run_probe(info, config, hw, ProbeOptions(vram_budget=4 * GiB, use_cache=False), backend=SIM_CUDA_BACKEND,
              plan=plan, runner=_fits)
    assert made == [config]  # a 4 GiB question: the session's plan (for the whole card) does not answer it
