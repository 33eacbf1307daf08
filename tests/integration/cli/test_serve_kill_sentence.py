"""`serve` says what the crash card says when its server is killed with memory to spare: the new sentence in English
and in Chinese, Restart as the next step, and the memory readings as the evidence (a real llama-server, killed the
moment it is ready, as `kill -9` would)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.cli.test_server_dies import Command, KillWhenReady, assert_nothing_left, server_args

pytestmark = pytest.mark.slow

SENTENCES = {
    "en": ("The server was stopped from outside while memory was fine", "Restart it with the same settings."),
    "zh": ("服务器在内存充足时被外部结束", "用相同的设置重新启动即可。"),
}


@pytest.fixture
def model(tiny_model, tmp_path) -> Path:
    """The tiny model under a path of this test's own, so that any server left running for it can be found."""
    copy = tmp_path / "killed.gguf"
    shutil.copyfile(tiny_model, copy)
    return copy


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_serve_says_a_kill_with_memory_to_spare_came_from_outside(lang, model, app_home, request):
    killer = KillWhenReady(app_home)
    killer.start()
    command = Command(app_home, "--lang", lang, "serve", str(model), *server_args("llama-server", request),
                      "--ctx", "512", "--no-restart")
    try:
        code, out, err = command.finish()
    finally:
        command.kill()
        killer.stop()
    sentence, next_step = SENTENCES[lang]
    assert len(killer.killed) == 1 and code == 1 and "Traceback" not in out + err, out + err
    assert sentence in out + err and next_step in out + err, out + err
    evidence = [line for line in (out + err).splitlines()
                if line.startswith("  | ") and " used of " in line and " available" in line]
    assert evidence, out + err  # the memory readings, as the card shows them
    assert "Lower the context" not in out + err and "上下文长度降到" not in out + err
    print(out + err)
    assert_nothing_left(model, app_home, killer.seen)
