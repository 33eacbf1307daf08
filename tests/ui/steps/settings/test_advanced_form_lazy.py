"""The Advanced section makes its fields when it is first shown (app/ui/steps/settings/advanced_form.py): before
that it reads back, and then shows, exactly what fields made at once would."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QWidget

from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, LaunchConfig
from app.ui.steps.settings.advanced_form import AdvancedForm

CONFIGS = [
    LaunchConfig(model="/m.gguf"),
    LaunchConfig(model="/m.gguf", cache_type_k="q8_0", cache_type_v="nonsense", flash_attn=True, threads=600,
                 load_mode="mlock", n_cpu_moe=70, backend=BACKEND_LLAMA_SERVER, server_bin="  /opt/llama-server ",
                 host=" 0.0.0.0 ", port=0, pick_free_port=False, api_key=" key "),
    LaunchConfig(model="/m.gguf", flash_attn=False, threads=-2, load_mode="odd", n_cpu_moe=5, host="127.0.0.1",
                 port=70000, api_key=""),
]


def _form(qtbot, *, built: bool) -> AdvancedForm:
    form = AdvancedForm()
    qtbot.addWidget(form)
    if built:
        form.show()
    return form


def _shown(form: AdvancedForm) -> dict[str, object]:
    """What each field shows (texts, items chosen, numbers, ticks) once the section is open."""
    form.show()
    seen: dict[str, object] = {}
    for name in ("cache_k", "cache_v", "flash_attn", "threads", "load_mode", "experts_in_ram", "backend",
                 "engine_own", "server_bin", "host", "port", "pick_free_port", "api_key"):
        widget: QWidget = getattr(form, name)
        value = widget.currentIndex() if isinstance(widget, QComboBox) else (
            widget.value() if hasattr(widget, "value") else widget.isChecked() if hasattr(widget, "isChecked")
            else widget.text())
        seen[name] = (value, widget.isVisibleTo(form), widget.isEnabled(), getattr(widget, "maximum", lambda: None)())
    return seen


def _steps(form: AdvancedForm, config: LaunchConfig, step: int) -> None:
    """The calls the Settings step makes, in a few orders."""
    if step == 0:
        form.set_values(config)
    elif step == 1:
        form.show_experts(48)
        form.set_values(config)
    elif step == 2:
        form.set_values(config)
        form.show_experts(48)
        form.set_engine(BACKEND_LLAMA_SERVER, " /usr/bin/llama-server", only_for_model=True)
    else:
        form.set_engine(BACKEND_EMBEDDED, None)
        form.show_experts(None)


def test_a_folded_form_reads_and_opens_as_a_built_one(qtbot) -> None:
    fresh = _form(qtbot, built=False)
    assert not fresh._built  # nothing made yet: the point of it
    assert fresh.values() == _form(qtbot, built=True).values()
    for config in CONFIGS:
        for step in range(4):
            lazy, built = _form(qtbot, built=False), _form(qtbot, built=True)
            _steps(lazy, config, step)
            _steps(built, config, step)
            assert lazy.values() == built.values(), (config, step)
            assert lazy.engine_only_for_model() == built.engine_only_for_model()
            assert not lazy._built
            assert _shown(lazy) == _shown(built), (config, step)
            assert lazy.values() == built.values()


def test_a_field_asked_for_makes_the_fields(qtbot) -> None:
    form = _form(qtbot, built=False)
    form.set_values(CONFIGS[1])
    assert form.port.value() == 1 and form._built  # the field, made with the value it was given
    form.port.setValue(18555)
    assert form.values()["port"] == 18555
