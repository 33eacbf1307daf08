"""The Model step's summary of a real model (SmolLM2-135M-Instruct Q4_1): titled by its file name, its file type in
plain words, and what the file calls itself (a training-run id) only in the tooltip — in both languages."""

from __future__ import annotations

from app.core.text import set_language
from app.ui import workers
from app.ui.steps.model.model_panel import ModelPanel

LONG = 60_000


def test_a_real_models_summary_reads_without_jargon(qtbot, smollm2_model):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.open_model(str(smollm2_model))
    qtbot.waitUntil(lambda: panel.report is not None and panel.report.info is not None, timeout=LONG)
    try:
        first, second = panel.summary.text().split("\n")
        assert first == "SmolLM2-135M-Instruct.Q4_1.gguf"
        assert second.replace("\u00a0", " ") == ("llama · 134.5M parameters · 4-bit (Q4_1) · 93.8 MiB · "
                                                 "trained context 8192")
        assert "Smollm2 135M 8k" in panel.summary.toolTip() and "file name" in panel.summary.toolTip()
        set_language("zh")
        panel.retranslate()
        second = panel.summary.text().split("\n")[1].replace("\u00a0", " ").replace("\u2060", "")
        assert "4 位（Q4_1）" in second and "MOSTLY" not in second and "Smollm2" not in second
        assert "名称字段" in panel.summary.toolTip()
    finally:
        set_language("en")
        qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=LONG)
