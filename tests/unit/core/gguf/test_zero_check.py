"""The zero-data row: an interrupted download (zero tail) or a lost segment (zero hole) fails, in the fast check
and in the full pass that rides on the SHA-256; zero rows and tensors a real model can have do not."""

from __future__ import annotations

import hashlib
import shutil

import numpy as np
import pytest

from app.core.gguf.reader import read_model_info
from app.core.gguf.validate import validate
from app.core.gguf.zero_check import CHECK_ID
from app.core.problem import Fix, Status
from app.core.text import human_bytes
from tests.unit.core.gguf.test_support import write_gguf

EMBD = 512  # F16 rows of 1 KiB
FULL = (False, True)  # the fast probes, then the whole-file pass of the SHA-256


def _zero(path, start: int, end: int, target) -> None:
    data = bytearray(path.read_bytes())
    data[start:end] = bytes(end - start)
    target.write_bytes(bytes(data))


def _row(path, full: bool):
    return validate(path, compute_sha256=full).check(CHECK_ID)


@pytest.fixture(scope="module")
def moe_model(tmp_path_factory):
    """The generated deepseek2 (F16, 7.7 MiB, MoE): a real layout of 34 tensors that llama.cpp loads."""
    from app.core.synthetic import write_model

    return write_model("deepseek2", tmp_path_factory.mktemp("zero") / "deepseek2.F16.gguf")


@pytest.mark.parametrize("full", FULL)
def test_a_clean_model_passes(moe_model, full):
    row = _row(moe_model, full)
    assert row.status is Status.OK
    assert ("whole file was read" in str(row.message)) == full


@pytest.mark.parametrize("full", FULL)
def test_a_download_that_stopped_at_70_percent(moe_model, tmp_path, full):
    size = moe_model.stat().st_size
    cut = int(size * 0.7)
    damaged = tmp_path / "stopped.gguf"
    _zero(moe_model, cut, size, damaged)
    report = validate(damaged, compute_sha256=full)
    row = report.check(CHECK_ID)
    assert row.status is Status.ERROR and report.has_errors
    assert row.message.render("en") == (f"The last {human_bytes(size - cut)} of this file are zeros: the download "
                                        "stopped before the end.")
    assert "Download the file again" in row.next_step.render("en")
    assert row.action.kind is Fix.REDOWNLOAD
    assert "to the end of the data" in " ".join(row.evidence)
    assert [c.id for c in report.checks if c.is_error] == [CHECK_ID]  # every other check passes such a file


@pytest.mark.parametrize("full", FULL)
@pytest.mark.parametrize("start", [3 << 20, (3 << 20) + 12_345, 6 << 20])
def test_a_zeroed_mib_inside_the_tensor_data(moe_model, tmp_path, full, start):
    damaged = tmp_path / "hole.gguf"
    _zero(moe_model, start, start + (1 << 20), damaged)
    row = _row(damaged, full)
    assert row.status is Status.ERROR
    assert row.message.render("en").startswith("1.0 MiB in the middle of this file are zeros (from ")


def _legit_zero_tensors():
    """What real models hold: an embedding whose last 1,500 rows are zero (untrained or padding tokens,
    1.5 MiB), zero biases, an expert that is all zero (1.2 MiB), and an output matrix that ends the file with
    300 zero rows (300 KiB)."""
    rng = np.random.default_rng(1)
    embd = rng.standard_normal((3000, EMBD)).astype(np.float16)
    embd[1500:] = 0
    experts = rng.standard_normal((4, 1200, EMBD)).astype(np.float16)
    experts[2] = 0
    output = rng.standard_normal((1000, EMBD)).astype(np.float16)
    output[700:] = 0
    return [("token_embd.weight", embd),
            ("blk.0.attn_norm.weight", np.ones(EMBD, dtype=np.float32)),
            ("blk.0.attn_q.bias", np.zeros(EMBD, dtype=np.float32)),
            ("blk.0.attn_k.bias", np.zeros(EMBD, dtype=np.float32)),
            ("blk.0.ffn_gate_exps.weight", experts),
            ("output.weight", output)]


@pytest.fixture(scope="module")
def legit_zeros(tmp_path_factory):
    return write_gguf(tmp_path_factory.mktemp("legit") / "zero-rows.gguf", n_layers=1, embd=EMBD,
                      tensors=_legit_zero_tensors())


@pytest.mark.parametrize("full", FULL)
def test_zero_rows_and_tensors_a_real_model_can_have_pass(legit_zeros, full):
    row = _row(legit_zeros, full)
    assert row.status is Status.OK, row.evidence
    judged = [line for line in row.evidence if line.startswith("zero bytes")]
    assert len(judged) == 3 and all("can be legitimate" in line for line in judged)  # found, and judged


def _tensor_start(path, name: str) -> int:
    info = read_model_info(path)
    return info.data_offset + next(t.offset for t in info.tensors if t.name == name)


@pytest.mark.parametrize("full", FULL)
def test_the_same_zeros_off_the_row_boundaries_fail(legit_zeros, tmp_path, full):
    """The rule has teeth: the embedding's zero stretch, begun 1,000 bytes before a row ends, is damage."""
    zero_rows_start = _tensor_start(legit_zeros, "token_embd.weight") + 1500 * EMBD * 2
    damaged = tmp_path / "shifted.gguf"
    _zero(legit_zeros, zero_rows_start - 1000, zero_rows_start, damaged)
    row = _row(damaged, full)
    assert row.status is Status.ERROR and "in the middle of this file are zeros" in row.message.render("en")


def _hf_cache_copy(src, root, digest: str):
    """``src`` laid out as huggingface_hub stores a download: blobs/<digest>, and a snapshot link to it."""
    repo = root / "hub" / "models--someone--tiny-GGUF"
    blob = repo / "blobs" / digest
    blob.parent.mkdir(parents=True)
    shutil.copyfile(src, blob)
    link = repo / "snapshots" / "0123abc" / "tiny.gguf"
    link.parent.mkdir(parents=True)
    link.symlink_to(blob)
    return link


def test_a_hugging_face_cache_file_is_compared_with_its_blob_name(tiny_model, tmp_path):
    digest = hashlib.sha256(tiny_model.read_bytes()).hexdigest()
    good = _hf_cache_copy(tiny_model, tmp_path / "a", digest)
    assert validate(good).check("sha256") is None  # the name is compared when a hash pass runs, not forced
    row = validate(good, compute_sha256=True).check("sha256")
    assert row.status is Status.OK and "Hugging Face" in row.message.render("en")
    bad = _hf_cache_copy(tiny_model, tmp_path / "b", "ab" * 32)  # stored under a name its bytes no longer match
    row = validate(bad, compute_sha256=True).check("sha256")
    assert row.status is Status.ERROR and "ab" * 32 in row.message.render("en")


def test_an_ollama_blob_is_compared_with_its_name(tiny_model, tmp_path):
    digest = hashlib.sha256(tiny_model.read_bytes()).hexdigest()
    blobs = tmp_path / "models" / "blobs"
    blobs.mkdir(parents=True)
    good, bad = blobs / f"sha256-{digest}", blobs / f"sha256-{'cd' * 32}"
    shutil.copyfile(tiny_model, good)
    shutil.copyfile(tiny_model, bad)
    row = validate(good, compute_sha256=True).check("sha256")
    assert row.status is Status.OK and "Ollama" in row.message.render("en")
    assert validate(bad, compute_sha256=True).check("sha256").status is Status.ERROR


def test_a_file_named_like_a_digest_elsewhere_is_not_taken_for_one(tiny_model, tmp_path):
    plain = tmp_path / ("ef" * 32)
    shutil.copyfile(tiny_model, plain)
    row = validate(plain, compute_sha256=True).check("sha256")
    assert row.status is Status.OK and "no expected value" in row.message.render("en")


@pytest.mark.parametrize("full", FULL)
def test_two_matrices_whose_facing_ends_are_zero_rows_pass(tmp_path, full):
    """An embedding ending in untrained-token rows next to an output matrix that starts with them: one stretch
    over two matrices, but on row boundaries and over no whole part in between."""
    rng = np.random.default_rng(2)
    embd = rng.standard_normal((1500, EMBD)).astype(np.float16)
    embd[900:] = 0
    output = rng.standard_normal((1500, EMBD)).astype(np.float16)
    output[:700] = 0
    path = write_gguf(tmp_path / "facing.gguf", n_layers=1, embd=EMBD, tensors=[
        ("token_embd.weight", embd), ("output.weight", output),
        ("blk.0.attn_norm.weight", np.ones(EMBD, dtype=np.float32))])
    row = _row(path, full)
    assert row.status is Status.OK and any("can be legitimate" in line for line in row.evidence), row.evidence
