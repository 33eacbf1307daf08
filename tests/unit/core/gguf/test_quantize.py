"""app.core.gguf.quantize: llama.cpp's quantizer in a child process, its output, and every way it can fail.

The failure cases run a stand-in for the child's interpreter (a shell script) that crashes, hangs, fails or
writes garbage, which is how native code misbehaves; the success cases run the real llama-cpp-python."""

from __future__ import annotations

import subprocess

import pytest

from app.core.gguf.quantize import (
    BAD_OUTPUT,
    CANCELLED,
    CRASHED,
    FAILED,
    MISSING_SOURCE,
    NO_ENGINE,
    QUANT_TYPES,
    TIMED_OUT,
    QuantizeError,
    quantize,
    quantized_path,
)
from app.core.gguf.reader import read_model_info
from app.core.gguf.validate import validate
from app.core.problem import Status

GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q4_1, GGML_Q8_0, GGML_Q4_K, GGML_Q6_K = 0, 1, 2, 3, 8, 12, 14
EXPECTED_TYPES = {  # per file type: the types llama.cpp uses for 2-D weights (output.weight gets more bits)
    "Q4_0": {GGML_Q4_0, GGML_Q6_K},
    "Q4_1": {GGML_Q4_1, GGML_Q6_K},
    "Q8_0": {GGML_Q8_0},
    "Q4_K_M": {GGML_Q4_K, GGML_Q6_K},
}


def _weight_types(path) -> dict[str, int]:
    return {t.name: t.type_id for t in read_model_info(path).tensors
            if len(t.shape) >= 2 and not t.name.endswith("ffn_gate_inp.weight")}


def _fake_python(tmp_path, body: str) -> str:
    """A stand-in interpreter: called as ``PY -c CODE SRC OUT FTYPE THREADS`` like the real child."""
    script = tmp_path / "fake-python"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    return str(script)


@pytest.mark.slow  # runs llama.cpp's real quantizer
@pytest.mark.parametrize("quant", sorted(EXPECTED_TYPES))
def test_quantizes_a_generated_model_to_each_type(tmp_path, synthetic_models, quant):
    src = synthetic_models("qwen3moe")
    out = quantize(src, quant, tmp_path / "out" / f"m.{quant}.gguf")
    info = read_model_info(out)
    assert info.file_type == QUANT_TYPES[quant] and info.architecture == "qwen3moe"
    types = _weight_types(out)
    assert set(types.values()) <= EXPECTED_TYPES[quant], types  # no fallback to a 32-block type for K-quants
    assert types["blk.0.ffn_down_exps.weight"] in EXPECTED_TYPES[quant]
    assert out.stat().st_size < src.stat().st_size
    assert validate(out).status is Status.OK
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # nothing half-written left beside it


@pytest.mark.slow  # runs llama.cpp's real quantizer
def test_default_output_name_and_overwrite(tmp_path, synthetic_models):
    src = tmp_path / "qwen2.gguf"
    src.write_bytes(synthetic_models("qwen2").read_bytes())
    assert quantized_path(src, "Q8_0") == tmp_path / "qwen2.Q8_0.gguf"
    first = quantize(src, "Q8_0")
    assert first == tmp_path / "qwen2.Q8_0.gguf"
    first.write_bytes(b"old")
    assert quantize(src, "Q8_0") == first and read_model_info(first).file_type == QUANT_TYPES["Q8_0"]


def _tensor_data(path) -> dict[str, bytes]:
    info = read_model_info(path)
    with open(path, "rb") as handle:
        data = {}
        for tensor in info.tensors:
            handle.seek(info.data_offset + tensor.offset)
            data[tensor.name] = handle.read(tensor.n_bytes)
    return data


def test_matches_llama_quantize(tmp_path, synthetic_models, llama_quantize_bin):
    """llama.cpp's own tool (the test llama-server's build) writes the same tensors, byte for byte, as the app's
    quantizer (llama-cpp-python's vendored llama.cpp): same type choices, same quantization code."""
    src = synthetic_models("gemma3")
    ours = quantize(src, "Q4_K_M", tmp_path / "ours.gguf")
    theirs = tmp_path / "theirs.gguf"
    done = subprocess.run([llama_quantize_bin, str(src), str(theirs), "Q4_K_M", "1"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _weight_types(ours) == _weight_types(theirs)
    assert read_model_info(theirs).file_type == read_model_info(ours).file_type
    assert _tensor_data(ours) == _tensor_data(theirs)


@pytest.mark.slow  # runs llama.cpp's real quantizer
def test_f16_of_a_quantized_file_needs_allow_requantize(tmp_path, tiny_model):
    """The demo's copy: SmolLM2's Q4_1 weights expanded to F16 (llama.cpp refuses unless asked)."""
    folder = tmp_path / "models"
    q4_1 = quantize(tiny_model, "Q4_1", folder / "m.Q4_1.gguf")
    with pytest.raises(QuantizeError) as caught:
        quantize(q4_1, "F16", folder / "refused.gguf")
    assert caught.value.kind == FAILED
    assert any("failed to quantize: requantizing from type" in line for line in caught.value.evidence)
    out = quantize(q4_1, "F16", folder / "m.F16.gguf", allow_requantize=True)
    assert read_model_info(out).file_type == QUANT_TYPES["F16"] and set(_weight_types(out).values()) == {GGML_F16}
    assert sorted(p.name for p in folder.iterdir()) == ["m.F16.gguf", "m.Q4_1.gguf"]


def test_cancel_stops_the_child_and_keeps_nothing(tmp_path, tiny_model):
    seen: list[int] = []
    with pytest.raises(QuantizeError) as caught:
        quantize(tiny_model, "Q8_0", tmp_path / "out" / "m.gguf", progress=seen.append, cancel=lambda: True)
    assert caught.value.kind == CANCELLED and "was cancelled; nothing was kept" in caught.value.message.render("en")
    assert seen and list((tmp_path / "out").iterdir()) == []


def test_missing_source(tmp_path):
    with pytest.raises(QuantizeError) as caught:
        quantize(tmp_path / "nope.gguf", "Q4_0")
    error = caught.value
    assert error.kind == MISSING_SOURCE and "does not exist" in error.message.render("en")
    assert "不存在" in error.message.render("zh") and error.next_step is not None


def test_unknown_quant_is_a_programming_error(tmp_path):
    with pytest.raises(ValueError, match="Q4_K_M"):
        quantize(tmp_path / "x.gguf", "Q3_XYZ")


@pytest.mark.slow  # runs llama.cpp's real quantizer
def test_not_a_gguf_is_llama_cpp_s_own_words(tmp_path):
    src = tmp_path / "junk.gguf"
    src.write_bytes(b"this is not a model" * 100)
    with pytest.raises(QuantizeError) as caught:
        quantize(src, "Q4_0")
    error = caught.value
    assert error.kind == FAILED and "could not quantize junk.gguf to Q4_0" in error.message.render("en")
    assert "junk.gguf" in error.message.render("zh") and "{" not in error.message.render("zh")
    assert error.evidence and any("failed" in line.lower() or "error" in line.lower() for line in error.evidence)
    assert not (tmp_path / "junk.Q4_0.gguf").exists()


def test_a_crash_in_the_child_is_reported_and_the_caller_lives(tmp_path, tiny_model):
    python = _fake_python(tmp_path, 'echo "ggml: illegal instruction in tile kernel" >&2\nkill -ILL $$')
    with pytest.raises(QuantizeError) as caught:
        quantize(tiny_model, "Q4_K_M", tmp_path / "out.gguf", python=python)
    error = caught.value
    assert error.kind == CRASHED and "SIGILL" in error.message.render("en") and "SIGILL" in error.message.render("zh")
    assert any("illegal instruction" in line for line in error.evidence)
    assert not (tmp_path / "out.gguf").exists()


@pytest.mark.slow  # waits out the real 1 s time limit
def test_a_hanging_child_is_stopped(tmp_path, tiny_model):
    python = _fake_python(tmp_path, "exec sleep 60")
    with pytest.raises(QuantizeError) as caught:
        quantize(tiny_model, "Q8_0", tmp_path / "out.gguf", python=python, timeout_s=1)
    assert caught.value.kind == TIMED_OUT and "1 seconds" in caught.value.message.render("en")


def test_success_with_garbage_output_is_refused(tmp_path, tiny_model):
    python = _fake_python(tmp_path, 'echo garbage > "$4"\nexit 0')
    with pytest.raises(QuantizeError) as caught:
        quantize(tiny_model, "Q8_0", tmp_path / "out.gguf", python=python)
    assert caught.value.kind == BAD_OUTPUT
    assert not (tmp_path / "out.gguf").exists() and not list(tmp_path.glob(".*.part"))


def test_no_engine(tmp_path, tiny_model):
    with pytest.raises(QuantizeError) as caught:
        quantize(tiny_model, "Q8_0", tmp_path / "out.gguf", python=str(tmp_path / "no-such-python"))
    assert caught.value.kind == NO_ENGINE
    python = _fake_python(tmp_path, 'echo "error: cannot import llama_cpp" >&2\nexit 4')
    with pytest.raises(QuantizeError) as caught:
        quantize(tiny_model, "Q8_0", tmp_path / "out.gguf", python=python)
    assert caught.value.kind == NO_ENGINE and "llama-cpp-python" in caught.value.message.render("en")
