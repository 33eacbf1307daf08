"""A generated vision projector loads in the real llama-server next to a generated text model, and an image
request gets an answer: the app's own --mmproj argument, the projector writer and the finder, end to end."""

from __future__ import annotations

import base64
import struct
import zlib

import httpx
import pytest

from app.core.gguf.projector import find_projector
from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.projector import projector_bytes
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic import write_model
from app.core.synthetic.projector import ProjectorSpec, write_projector

pytestmark = pytest.mark.slow

READY_S = 90.0


def tiny_png(width: int, height: int) -> bytes:
    """An RGB PNG with a colour gradient, encoded here (no imaging library needed)."""
    rows = b"".join(b"\x00" + bytes(v for x in range(width) for v in ((x * 37) % 256, (y * 53) % 256, 128))
                    for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_llama_server_loads_the_found_projector_and_answers_an_image(tmp_path, llama_server_bin):
    model = write_model("llama", tmp_path / "tiny-vision.gguf")
    text_n_embd = read_model_info(model).embedding_length
    spec = ProjectorSpec()
    write_projector(tmp_path / "mmproj-tiny-vision-f16.gguf", text_n_embd, spec)
    projector = find_projector(model)
    assert projector is not None and projector.name == "mmproj-tiny-vision-f16.gguf"
    assert projector_bytes(read_model_info(projector)) > 0

    config = LaunchConfig(model=str(model), backend="llama-server", server_bin=llama_server_bin, ctx=256, threads=1,
                          batch=128, ubatch=128, port=find_free_port(), mmproj=str(projector))
    supervisor = Supervisor(config, auto_restart=False)
    auth = {"Authorization": f"Bearer {supervisor.api_key}"}
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, READY_S)
        log = "\n".join(line.text for line in supervisor.tail(40))
        assert state is State.READY, f"not ready with the projector ({state}): {supervisor.last_diagnosis}\n{log}"
        assert "loaded multimodal model" in log, log
        image = "data:image/png;base64," + base64.b64encode(tiny_png(16, 16)).decode("ascii")
        reply = httpx.post(supervisor.url + "/v1/chat/completions", timeout=60, headers=auth, json={
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": image}}]}],
            "max_tokens": 4, "temperature": 0})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["usage"]["completion_tokens"] == 4, body
        # the image became spec.n_patches embeddings in the prompt, next to the text's tokens
        text_only = httpx.post(supervisor.url + "/v1/chat/completions", timeout=60, headers=auth, json={
            "messages": [{"role": "user", "content": [{"type": "text", "text": "What is in this picture?"}]}],
            "max_tokens": 1, "temperature": 0}).json()
        assert body["usage"]["prompt_tokens"] - text_only["usage"]["prompt_tokens"] >= spec.n_patches, (body, text_only)
    finally:
        supervisor.close()
