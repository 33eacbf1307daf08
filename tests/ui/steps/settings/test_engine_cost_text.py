"""Picking the built-in engine, the Settings step's plan text says how much more memory it needs than llama-server
for the open model (the plan's own sentence, the same one the plan command prints)."""

from __future__ import annotations

import re

from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.synthetic import write_model
from app.core.synthetic.archs import GEMMA3_SPEC
from app.ui.steps.settings.settings_preview import compute_preview, plan_text


def test_the_built_in_engine_is_said_to_use_more_than_llama_server(qapp, tmp_path):
    info = read_model_info(write_model("gemma3", tmp_path / "gemma3.gguf", GEMMA3_SPEC))
    config = LaunchConfig(model=str(info.path), backend="embedded", ctx=4096, gpu_layers=0, parallel=1)
    text = plan_text(compute_preview(info, config, None))
    assert re.search(r"The built-in engine uses about \d+ MiB more than llama-server for this model\.", text)
    server = plan_text(compute_preview(info, config.with_changes(backend="llama-server"), None))
    assert "built-in engine uses" not in server and "--" not in text
