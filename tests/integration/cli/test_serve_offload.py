"""`gguf-launcher serve` with every layer asked of a CPU-only llama-server (this machine has no GPU): before the
ready line it says that none went to the graphics card, with the next step, instead of running slowly in silence."""

from __future__ import annotations

import signal

import pytest

from app.core.launch.ports import find_free_port
from tests.integration.cli.test_supervisor_cli import serve


@pytest.mark.slow  # a real server
def test_serve_says_no_layer_went_to_the_graphics_card(tiny_model, llama_server_bin):
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--port", str(find_free_port()), "--ctx", "512", "--gpu-layers", "-1")
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.rstrip())
            if line.startswith("The model is ready at") or "could not" in line:
                break
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    text = "\n".join(lines)
    assert lines[-1].startswith("The model is ready at"), text
    said = next(i for i, line in enumerate(lines) if line.startswith("The engine put no"))
    assert "graphics card" in lines[said] and lines[said + 1].startswith("  next step: This engine cannot use a")
    assert "  | engine backends: CPU" in lines, text
