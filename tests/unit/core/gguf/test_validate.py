"""validate(): quant types per build, split shards, path problems and the safe copy that fixes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.core.gguf.path_checks import characters_check, classify_mount, linux_mount_of
from app.core.gguf.quant_types import embedded_supported_types, supported_types_for_build
from app.core.gguf.reader import read_model_info
from app.core.gguf.safe_copy import safe_copy_for_path_problem
from app.core.gguf.validate import validate
from app.core.problem import Fix, Status, fix_action
from tests.unit.core.gguf.test_support import set_tensor_type, write_gguf


def _last_tensor_model(tmp_path: Path) -> Path:
    # the patched tensor is last, so changing its type changes no later offset
    tensors = [("token_embd.weight", np.ones((4, 256), dtype=np.float32)),
               ("output.weight", np.ones(256, dtype=np.float32))]
    return write_gguf(tmp_path / "q.gguf", tensors=tensors)


def test_all_checks_pass_on_a_good_model(tiny_model):
    report = validate(tiny_model)
    assert not report.has_errors and report.status is Status.OK
    ids = [c.id for c in report.checks]
    for expected in ("path", "path_chars", "path_drive", "magic", "version", "truncation", "tensor_offsets",
                     "tensor_sizes", "quant_types", "metadata", "split"):
        assert expected in ids
    assert report.to_dict("zh")["checks"][0]["message"]


def test_nvfp4_depends_on_the_build(tmp_path):
    path = _last_tensor_model(tmp_path)
    set_tensor_type(path, "output.weight", 40)
    info = read_model_info(path)
    assert info.tensors[-1].type_id == 40 and info.tensors[-1].n_bytes == 4 * 36
    old = validate(path, supported_types=supported_types_for_build(6000)).check("quant_types")
    assert old.status is Status.ERROR and "NVFP4" in str(old.message) and old.action.kind is Fix.UPDATE_BACKEND
    assert validate(path, supported_types=supported_types_for_build(11434)).check("quant_types").status is Status.OK
    assert validate(path, supported_types=embedded_supported_types()).check("quant_types").status is Status.OK
    assert 40 not in supported_types_for_build(8000) and 39 in supported_types_for_build(8000)


def test_removed_and_unknown_type_ids(tmp_path):
    path = _last_tensor_model(tmp_path)
    set_tensor_type(path, "output.weight", 4)
    check = validate(path).check("quant_types")
    assert check.status is Status.ERROR and "Q4_2" in str(check.message) and "removed" in str(check.message)
    set_tensor_type(path, "output.weight", 31)
    assert "Q4_0_4_4" in str(validate(path).check("quant_types").message)
    set_tensor_type(path, "output.weight", 99)
    check = validate(path).check("quant_types")
    assert check.status is Status.ERROR and "99" in str(check.message)


def test_row_not_multiple_of_block_size(tmp_path):
    tensors = [("output.weight", np.ones(100, dtype=np.float32))]
    path = write_gguf(tmp_path / "r.gguf", tensors=tensors)
    set_tensor_type(path, "output.weight", 8)  # Q8_0 needs rows of 32k values
    assert validate(path).check("tensor_sizes").status is Status.ERROR


def test_non_contiguous_offsets(tmp_path):
    path = _last_tensor_model(tmp_path)
    set_tensor_type(path, "token_embd.weight", 1)  # F32 -> F16 halves its size, so the next offset is wrong
    check = validate(path).check("tensor_offsets")
    assert check.status is Status.ERROR and "expected" in str(check.message)


def _write_split(folder: Path, n: int, skip=()) -> list[Path]:
    folder.mkdir(exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / f"big-model-{i + 1:05d}-of-{n:05d}.gguf"
        extra = {"split.no": (i, _u16()), "split.count": (n, _u16()), "split.tensors.count": (2 * n, _i32())}
        tensors = [(f"blk.{i}.a.weight", np.ones(8, dtype=np.float32)),
                   (f"blk.{i}.b.weight", np.ones(8, dtype=np.float32))]
        if i not in skip:
            write_gguf(path, n_layers=n, extra_kv=extra, tensors=tensors)
        paths.append(path)
    return paths


def _u16():
    import gguf

    return gguf.GGUFValueType.UINT16


def _i32():
    import gguf

    return gguf.GGUFValueType.INT32


def test_split_all_present(tmp_path):
    shards = _write_split(tmp_path / "s", 3)
    report = validate(shards[0])
    assert report.check("split").status is Status.OK and "3" in str(report.check("split").message)
    assert report.info.split_count == 3 and report.info.split_no == 0 and report.info.split_tensors_count == 6
    later = validate(shards[2])
    assert later.check("split_first").status is Status.WARNING
    assert later.check("split_first").action == fix_action(Fix.USE_FIRST_SHARD, path=str(shards[0]))


def test_split_with_a_missing_shard(tmp_path):
    shards = _write_split(tmp_path / "s", 3, skip=(1,))
    check = validate(shards[0]).check("split")
    assert check.status is Status.ERROR
    assert shards[1].name in str(check.message) and "1 are missing" in str(check.message)
    assert check.action.get("missing") == [str(shards[1])]


def test_split_shards_from_different_downloads(tmp_path):
    shards = _write_split(tmp_path / "s", 2)
    other = _write_split(tmp_path / "o", 3)
    shards[1].unlink()
    other[1].rename(shards[1])
    assert validate(shards[0]).check("split").status is Status.ERROR


def test_non_ascii_path_is_read_and_windows_gets_a_copy_fix(tmp_path, tiny_model):
    folder = tmp_path / "模型 文件"
    folder.mkdir()
    path = folder / "小模型.gguf"
    path.write_bytes(tiny_model.read_bytes())
    report = validate(path)
    assert report.info is not None and report.info.block_count == 2  # the reader copes with the path
    assert report.check("path_chars").status is Status.OK  # fine for llama.cpp on Linux
    assert "non-ASCII" in str(report.check("path_chars").message)
    check = characters_check(path, platform="win32")
    assert check.status is Status.WARNING
    action = check.action
    assert action.kind is Fix.COPY_TO_SAFE_PATH and action.get("suggested_dir").isascii()
    seen = []
    copy = safe_copy_for_path_problem(path, action.get("suggested_dir"), progress=lambda d, t: seen.append((d, t)))
    assert str(copy).isascii() and " " not in str(copy) and copy.suffix == ".gguf"
    assert copy.read_bytes() == path.read_bytes()
    assert seen[-1][0] == seen[-1][1] == path.stat().st_size
    assert characters_check(copy, platform="win32").status is Status.OK
    spaced = tmp_path / "with space.gguf"
    spaced.write_bytes(b"GGUF")
    assert characters_check(spaced, platform="win32").status is Status.WARNING
    assert characters_check(spaced, platform="linux").status is Status.OK


def test_safe_copy_across_filesystems_is_atomic_and_cancellable(tmp_path, tiny_model):
    import pytest

    from app.core.gguf.safe_copy import _stream_copy
    from app.core.gguf.sha256 import HashCancelled

    dest = tmp_path / "out" / "m.gguf"
    dest.parent.mkdir()
    with pytest.raises(HashCancelled):
        _stream_copy(tiny_model, dest, None, lambda: True, 0, 1)
    assert list(dest.parent.iterdir()) == []  # no partial file left behind
    _stream_copy(tiny_model, dest, None, None, 0, 1)
    assert dest.read_bytes() == tiny_model.read_bytes()


def test_mount_classification():
    mounts = "\n".join([
        "overlay / overlay rw 0 0",
        "server:/export /mnt/models nfs4 rw 0 0",
        "//nas/share /home/u/nas cifs rw 0 0",
        "/dev/sdb1 /media/u/USB\\040STICK vfat rw 0 0",
        "C:\\134 /mnt/c 9p rw 0 0",
        "sshfs#me@h: /home/u/remote fuse.sshfs rw 0 0",
    ])
    def kind(p):
        return classify_mount(*linux_mount_of(Path(p), mounts))

    assert kind("/mnt/models/a.gguf") == "network"
    assert kind("/home/u/nas/a.gguf") == "network"
    assert kind("/media/u/USB STICK/a.gguf") == "removable"
    assert kind("/mnt/c/Users/a.gguf") == "windows_drive"
    assert kind("/home/u/remote/a.gguf") == "network"
    assert kind("/home/u/a.gguf") == "local"
    assert kind("/mnt/modelsX/a.gguf") == "local"


def test_split_summaries_cover_every_shard(tmp_path):
    shards = _write_split(tmp_path / "s", 3)
    info = read_model_info(shards[0])
    assert info.shard_paths == [str(p) for p in shards]
    assert info.tensor_types["F32"]["count"] == 6 and info.parameter_count == 6 * 8
    assert info.layer_bytes == [64, 64, 64]
    assert len(info.tensors) == 2  # this file's tensors only
    assert info.total_file_size == sum(p.stat().st_size for p in shards)
    shards[2].unlink()
    partial = read_model_info(shards[0])
    assert partial.shard_paths == [] and partial.tensor_types["F32"]["count"] == 2


def test_later_shard_without_metadata_is_not_a_metadata_error(tmp_path):
    import gguf

    folder = tmp_path / "m"
    folder.mkdir()
    path = folder / "x-00002-of-00002.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint16("split.no", 1)
    writer.add_uint16("split.count", 2)
    writer.add_tensor("blk.1.a.weight", np.ones(8, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert validate(path).check("metadata").status is Status.OK
