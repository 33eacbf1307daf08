"""A model with experts in the Settings step: the attempts list and the layers label say where the experts went in
plain words, with the measured speeds; the Advanced form's experts row exists only for such a model."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig
from app.core.probe import Attempt
from app.core.synthetic.moe_shapes import QWEN3_30B_A3B, moe_info
from app.core.synthetic.tiny_llama import write_tiny_llama
from app.ui.steps.settings.advanced_form import AdvancedForm
from tests.ui.steps.settings.probe_session import probe_box


def test_an_expert_split_row_says_where_the_experts_are_and_how_fast_it_ran(qtbot):
    info = moe_info(QWEN3_30B_A3B)
    box = probe_box(qtbot, info, LaunchConfig(model=str(info.path), backend="llama-server"))
    split = Attempt(49, 4096, ok=True, peak_rss_bytes=1 << 30, n_cpu_moe=20, prompt_tps=812.4, generation_tps=36.25)
    box._add_attempt(split)
    box._add_attempt(Attempt(49, 4096, ok=True, peak_rss_bytes=1 << 30, n_cpu_moe=21, generation_tps=35.0))
    box._add_attempt(Attempt(49, 4096, ok=True, peak_rss_bytes=1 << 30, n_cpu_moe=20, generation_tps=36.0))
    rows = [box.attempts.item(i).text() for i in range(box.attempts.count())]
    assert rows[0].startswith("all 48 layers on the GPU, experts of 20 layers on the processor, 4096 tokens")
    assert "36.2 tokens/s writing, 812 tokens/s reading the prompt" in rows[0]
    assert "experts of 21 layers" in rows[1] and "again" not in rows[1]  # another placement, not a repeat
    assert "again" in rows[2]
    dense = box.attempt_text(Attempt(12, 4096, ok=True, peak_rss_bytes=1 << 30))
    assert dense.startswith("12 GPU layers, 4096 tokens") and "tokens/s" not in dense  # no speed: none shown


def test_the_experts_row_only_for_a_model_with_experts_and_its_value_round_trips(qtbot):
    form = AdvancedForm()
    qtbot.addWidget(form)
    config = LaunchConfig(model="m.gguf", backend="llama-server", n_cpu_moe=12)
    form.set_values(config)
    assert form.values()["n_cpu_moe"] == 0 and not form.experts_in_ram.isVisibleTo(form)  # a dense model: none
    form.show_experts(48)
    form.set_values(config)
    assert form.values()["n_cpu_moe"] == 12 and form.experts_in_ram.isVisibleTo(form)
    assert form.experts_in_ram.maximum() == 48 and form.experts_in_ram.isEnabled()
    form.set_values(config.with_changes(backend="embedded"))
    assert not form.experts_in_ram.isEnabled()  # the built-in engine cannot keep experts apart


def test_the_settings_step_shows_the_split_in_words_and_applies_it(qtbot, tmp_path):
    from types import SimpleNamespace

    from app.core.session import ModelSession
    from app.ui.steps.settings.settings_panel import SettingsPanel

    path = write_tiny_llama(tmp_path / "tiny.gguf")
    session = ModelSession()
    session.checked = SimpleNamespace(info=moe_info(QWEN3_30B_A3B, str(path)), usable=True, path=str(path))
    session.config = LaunchConfig(model=str(path), backend="llama-server", gpu_layers=49)
    panel = SettingsPanel(session=session)
    qtbot.addWidget(panel)
    panel.hardware = SimpleNamespace(gpus=[object()], has_nvidia_gpu=False)  # one card: the layers slider is on
    panel.setEnabled(True)  # what show_model does once a model passed its checks
    panel._sync_layer_range()
    panel.advanced.show_experts(48)
    panel.apply_changes({"gpu_layers": 49, "ctx": 4096, "n_cpu_moe": 20})  # what a probe's answer applies
    assert panel.config().n_cpu_moe == 20 and session.config.n_cpu_moe == 20
    assert panel.gpu_layers_label.text() == "all 48 layers on the GPU, experts of 20 layers on the processor"
    panel.apply_changes({"n_cpu_moe": 0})
    assert panel.gpu_layers_label.text() == "all 49"
