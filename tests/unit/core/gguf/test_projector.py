"""Finding a model's vision projector (mmproj) next to it: by name, checked by header, never the model itself."""

from __future__ import annotations

import os
import time

import pytest

from app.core.gguf.projector import find_projector, is_projector, projector_candidates, read_projector
from app.core.gguf.reader import read_model_info
from app.core.synthetic import SyntheticSpec, write_model
from app.core.synthetic.projector import ProjectorSpec, write_projector

TINY = SyntheticSpec(n_layers=1)
SMALL = ProjectorSpec(n_layers=1, n_embd=32, n_head=2, n_ff=64, proj_hidden=32, image_size=16, patch_size=8)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("vision")
    write_model("llama", path / "gemma-3-4b-it-Q4_K_M.gguf", TINY)
    return path


def projector(path, name: str):
    return write_projector(path / name, 256, SMALL)


def test_generated_projector_reads_as_a_projector_and_the_model_does_not(folder, tmp_path):
    proj = read_model_info(projector(tmp_path, "mmproj-x.gguf"))
    assert is_projector(proj) and proj.architecture == "clip" and proj.metadata["general.type"] == "mmproj"
    assert proj.metadata["clip.projector_type"] == "mlp" and proj.metadata["clip.has_vision_encoder"] is True
    assert not is_projector(read_model_info(folder / "gemma-3-4b-it-Q4_K_M.gguf"))


def test_no_projector_next_to_the_model(folder):
    assert find_projector(folder / "gemma-3-4b-it-Q4_K_M.gguf") is None


def test_one_projector_is_found_whatever_its_name(tmp_path):
    model = write_model("llama", tmp_path / "model.gguf", TINY)
    projector(tmp_path, "mmproj-F16.gguf")
    assert find_projector(model) == tmp_path / "mmproj-F16.gguf"


def test_several_prefers_the_one_named_like_the_model_then_f16(tmp_path):
    model = write_model("llama", tmp_path / "gemma-3-4b-it-Q4_K_M.gguf", TINY)
    for name in ("mmproj-F32.gguf", "mmproj-qwen2.5-vl-7b-f16.gguf", "gemma-3-4b-it-mmproj-bf16.gguf",
                 "mmproj-gemma-3-4b-it-f16.gguf"):
        projector(tmp_path, name)
    assert find_projector(model).name == "mmproj-gemma-3-4b-it-f16.gguf"
    other = write_model("llama", tmp_path / "Qwen2.5-VL-7B-Instruct-Q8_0.gguf", TINY)
    assert find_projector(other).name == "mmproj-qwen2.5-vl-7b-f16.gguf"


def test_same_precision_and_no_name_match_goes_by_f16_first(tmp_path):
    model = write_model("llama", tmp_path / "model.gguf", TINY)
    for name in ("mmproj-BF16.gguf", "mmproj-F32.gguf", "mmproj-F16.gguf"):
        projector(tmp_path, name)
    assert find_projector(model).name == "mmproj-F16.gguf"


def test_a_language_model_named_mmproj_is_not_taken(tmp_path):
    model = write_model("llama", tmp_path / "model.gguf", TINY)
    write_model("llama", tmp_path / "mmproj-model-f16.gguf", TINY)  # a text model, whatever its name says
    assert projector_candidates(model) == [tmp_path / "mmproj-model-f16.gguf"]
    assert read_projector(tmp_path / "mmproj-model-f16.gguf") is None
    assert find_projector(model) is None


def test_unreadable_and_truncated_files_are_passed_over(tmp_path):
    model = write_model("llama", tmp_path / "model.gguf", TINY)
    (tmp_path / "mmproj-empty.gguf").write_bytes(b"")
    (tmp_path / "mmproj-bad.gguf").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 41)
    good = projector(tmp_path, "mmproj-good.gguf")
    (tmp_path / "mmproj-cut.gguf").write_bytes(good.read_bytes()[:200])
    if os.name != "nt" and os.geteuid() != 0:
        locked = projector(tmp_path, "mmproj-locked.gguf")
        locked.chmod(0)
    (tmp_path / "mmproj-folder.gguf").mkdir()
    assert find_projector(model) == good


def test_never_the_model_itself_even_when_it_is_named_mmproj(tmp_path):
    model = projector(tmp_path, "mmproj-only.gguf")  # a user opened the projector as the model
    assert projector_candidates(model) == [] and find_projector(model) is None
    link = tmp_path / "also-mmproj.gguf"
    try:
        link.symlink_to(model)
    except OSError:
        pytest.skip("no symlinks here")
    assert find_projector(model) is None  # the same file under another name is still the model


def test_missing_folder_is_no_crash(tmp_path):
    assert find_projector(tmp_path / "gone" / "model.gguf") is None


def test_only_names_with_mmproj_are_read_and_it_is_fast(tmp_path):
    model = write_model("llama", tmp_path / "model.gguf", TINY)
    for i in range(20):
        (tmp_path / f"other-{i}.gguf").write_bytes(b"not read")
    projector(tmp_path, "model-mmproj.gguf")
    started = time.perf_counter()
    assert find_projector(model) == tmp_path / "model-mmproj.gguf"
    assert time.perf_counter() - started < 1.0
