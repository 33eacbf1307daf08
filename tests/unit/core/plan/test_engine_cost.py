"""The sentence the plan adds for the built-in engine: how much more (or less) memory it needs than llama-server,
from the plans of both engines for the same model file and settings."""

from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.plan.budget import device_budgets
from app.core.plan.engine_cost import MiB, built_in_extra_bytes, built_in_extra_text, planned_total
from app.core.plan.memory import make_plan
from app.core.synthetic import write_model
from app.core.synthetic.archs import GEMMA3_SPEC

GiB = 1024 * MiB


def _config(model, backend: str) -> LaunchConfig:
    # the llama-server compared with is the config's (here one without a build record: this processor's kernels)
    return LaunchConfig(model=str(model), backend=backend, ctx=4096, gpu_layers=0, parallel=1, batch=512,
                        ubatch=512, threads=2, server_bin="/no/llama-server")


def test_the_plan_of_the_built_in_engine_says_what_it_costs_over_llama_server(tmp_path):
    info = read_model_info(write_model("gemma3", tmp_path / "gemma3.gguf", GEMMA3_SPEC))
    budgets = device_budgets(None, ram_budget=64 * GiB)
    embedded, server = _config(info.path, "embedded"), _config(info.path, "llama-server")
    extra = built_in_extra_bytes(info, embedded, 0, budgets)
    assert extra == planned_total(info, embedded, 0, budgets) - planned_total(info, server, 0, budgets)
    assert extra > 5 * MiB  # a tiny model: the Python web server around the built-in engine dominates
    sentence = built_in_extra_text(extra)
    assert sentence.render("en") == (f"The built-in engine uses about {round(extra / MiB)} MiB more than llama-server "
                                     "for this model.")
    assert "内置引擎" in sentence.render("zh")
    assert sentence in make_plan(info, embedded, None, ram_budget=64 * GiB).notes
    assert built_in_extra_bytes(info, server, 0, budgets) is None
    assert not any("built-in engine uses" in n.render("en") for n in make_plan(info, server, None).notes)


def test_less_and_about_the_same_are_said_as_such():
    assert built_in_extra_text(-40 * MiB).render("en").endswith("about 40 MiB less than llama-server for this model.")
    assert "about as much memory" in built_in_extra_text(2 * MiB).render("en")
    assert built_in_extra_text(None) is None
