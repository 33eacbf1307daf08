"""`gguf-launcher plan` on a request it cannot answer: a sentence and exit 1, never a traceback."""

from __future__ import annotations

from app.cli import main


def test_llama_cpps_numbers_need_the_llama_server_engine(capsys, tiny_model):
    assert main(["plan", str(tiny_model), "--backend", "embedded", "--llama-cpp"]) == 1
    err = capsys.readouterr().err
    assert "llama-server engine" in err and "--backend llama-server" in err and "Traceback" not in err
