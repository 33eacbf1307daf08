"""The built-in engine's entry point: llama-cpp-python's server with the sliding window and flash attention sized
as llama-server sizes them, checked on a real server process and llama.cpp's own log lines."""

import re
import subprocess
import sys
import time

import pytest

from app.core.launch.embedded_server import ContextChoices, split_args
from app.core.launch.ports import find_free_port
from app.core.synthetic import write_model
from app.core.synthetic.archs import GEMMA3_SPEC

READY_S = 90.0  # python imports llama-cpp-python's server slowly on a busy 2-core machine


def test_own_options_are_taken_out_and_the_rest_passed_on():
    choices, rest = split_args(["--model", "m.gguf", "--swa_full", "true", "--flash_attn=false", "--n_ctx", "512"])
    assert choices == ContextChoices(swa_full=True, flash_attn="false")
    assert rest == ["--model", "m.gguf", "--n_ctx", "512"]
    assert split_args(["--model", "m.gguf"]) == (ContextChoices(False, "auto"), ["--model", "m.gguf"])
    with pytest.raises(ValueError):
        split_args(["--flash_attn", "maybe"])


def _server_log(model, *extra: str) -> str:
    """llama.cpp's log of a real start of the entry point, up to the moment the web server listens."""
    argv = [sys.executable, "-m", "app.core.launch.embedded_server", "--model", str(model), "--n_ctx", "4096",
            "--n_threads", "1", "--host", "127.0.0.1", "--port", str(find_free_port()), *extra]
    lines: list[str] = []
    deadline = time.monotonic() + READY_S
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:  # closes the pipe
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                if "Uvicorn running" in line or time.monotonic() > deadline:
                    break
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return "".join(lines)


@pytest.mark.slow  # two real embedded servers, 1.4 s
def test_sliding_window_layers_hold_the_window_and_flash_attention_is_auto(tmp_path):
    model = write_model("gemma3", tmp_path / "gemma3.gguf", GEMMA3_SPEC)  # window 128 on 2 of 3 layers
    log = _server_log(model)
    assert "Uvicorn running" in log, log[-2000:]
    assert "flash_attn            = auto" in log and "FLASH_ATTN_EXT" in log  # on, as on every CPU
    swa_cells = int(re.search(r"creating\s+SWA KV cache, size = (\d+) cells", log).group(1))
    assert swa_cells == 768  # pad256(window 128 + ubatch 512), as llama-server; not the context's 4096
    full = _server_log(model, "--swa_full", "true", "--flash_attn", "false")
    assert re.search(r"creating\s+SWA KV cache, size = 4096 cells", full) and "FLASH_ATTN_EXT" not in full
