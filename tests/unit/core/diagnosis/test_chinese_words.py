"""Issue 25: the Chinese crash card says 词元 where the rest of the window does, not "token", and KV 缓存, not
"KV cache". Every recorded crash log is diagnosed with a config (so the sentences carry a context size and a fix)
and its sentences are read in Chinese."""

from __future__ import annotations

import pytest

from app.core.diagnosis import diagnose
from app.core.launch.config import LaunchConfig
from tests.paths import CRASH_LOGS

LOGS = sorted(CRASH_LOGS.glob("*.txt"))


@pytest.mark.parametrize("log", LOGS, ids=[log.stem for log in LOGS])
def test_chinese_crash_sentences_say_ci_yuan(log, tiny_model):
    config = LaunchConfig(model=str(tiny_model), ctx=8192, parallel=2)
    diagnosis = diagnose(134, log.read_text(encoding="utf-8").splitlines(), config, block_count=28)
    sentences = [text.render("zh") for text in (diagnosis.message, diagnosis.next_step) if text is not None]
    for sentence in sentences:
        assert "token" not in sentence.lower() and "KV cache" not in sentence, sentence


def test_the_context_fix_is_counted_in_ci_yuan(tiny_model):
    lines = (CRASH_LOGS / "kv_cache_alloc_failure.txt").read_text(encoding="utf-8").splitlines()
    diagnosis = diagnose(134, lines, LaunchConfig(model=str(tiny_model), ctx=8192, parallel=2), block_count=28)
    assert "个词元" in diagnosis.message.render("zh") + diagnosis.next_step.render("zh")
