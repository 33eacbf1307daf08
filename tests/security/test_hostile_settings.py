"""A hostile or broken settings file never hangs, exhausts memory or crashes the app: a FIFO (which blocked `models` and
`report` for ever), a link to /dev/zero (MemoryError), JSON nested 100,000 deep (RecursionError), a huge file or a
folder is set aside like a damaged file, with one sentence, and nothing is lost."""

from __future__ import annotations

import json
import os
import threading

import pytest

from app.core.bounded_json import MAX_BYTES, MAX_DEPTH, UnreadableJson, loads_bounded, nesting_depth, read_json
from app.core.settings import load_settings, settings_path

DEADLINE_S = 30  # far above the milliseconds it takes; only a hang reaches it


def _load_within_deadline():
    """load_settings() in a thread, so a hang fails the test instead of stopping the run."""
    box = {}
    thread = threading.Thread(target=lambda: box.update(settings=load_settings()), daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"reading the settings did not return within {DEADLINE_S} s"
    return box["settings"]


def _set_aside_with(reason_en: str, reason_zh: str):
    path = settings_path()
    settings = _load_within_deadline()
    backups = list(path.parent.glob("settings.json.corrupt-*"))
    assert len(backups) == 1, "the hostile file is kept aside, not deleted"
    notice_en, notice_zh = settings.notice.render("en"), settings.notice.render("zh")
    assert reason_en in notice_en and backups[0].name in notice_en and "Error" not in notice_en
    assert reason_zh in notice_zh and backups[0].name in notice_zh
    assert notice_en.startswith("Your settings file could not be read (") and notice_en.endswith("defaults are used.")
    assert path.is_file() and load_settings().notice is None  # a fresh, readable file took its place
    return backups[0]


@pytest.fixture
def settings_file():
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_fifo_is_set_aside_without_waiting_for_a_writer(settings_file):
    os.mkfifo(settings_file)
    backup = _set_aside_with("it is not a regular file", "不是普通文件")
    assert backup.is_fifo()


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_dev_zero_is_set_aside_without_reading_it(settings_file):
    settings_file.symlink_to("/dev/zero")
    backup = _set_aside_with("it is not a regular file", "不是普通文件")
    assert backup.is_symlink() and os.readlink(backup) == "/dev/zero"


def test_json_nested_100000_deep_is_set_aside(settings_file):
    settings_file.write_text('{"profiles": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _set_aside_with(f"nested more than {MAX_DEPTH} levels deep", f"嵌套超过 {MAX_DEPTH} 层")


def test_a_file_larger_than_the_bound_is_set_aside_unread(settings_file):
    with open(settings_file, "wb") as handle:
        handle.truncate(64 * 1024**3)  # sparse: no disk used, and reading it would take minutes and all the memory
    backup = _set_aside_with(f"larger than {MAX_BYTES // 1024**2} MiB", "大于")
    assert backup.stat().st_size == 64 * 1024**3


def test_a_folder_is_set_aside(settings_file):
    settings_file.mkdir()
    (settings_file / "keep.txt").write_text("mine")
    backup = _set_aside_with("it is not a regular file", "不是普通文件")
    assert (backup / "keep.txt").read_text() == "mine"


def test_brackets_inside_strings_do_not_count_and_ordinary_settings_read():
    assert nesting_depth('{"a": "[[[[[[\\"[[[", "b": [[1]]}', 10) == 3
    assert loads_bounded('{"x": "' + "{" * 1000 + '"}') == {"x": "{" * 1000}
    with pytest.raises(UnreadableJson):
        loads_bounded("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_a_link_to_an_ordinary_settings_file_is_read(settings_file, tmp_path):
    real = tmp_path / "dotfiles-settings.json"
    real.write_text('{"version": 3, "language": "zh"}')
    settings_file.symlink_to(real)
    settings = _load_within_deadline()
    assert settings.notice is None and settings.language == "zh"
    assert read_json(settings_file) == {"version": 3, "language": "zh"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("command", [pytest.param(["models", "--no-checks", "--json"], marks=pytest.mark.slow),
                                     ["report", "--json"]])  # models looks through other apps' folders: ~3 s
def test_commands_say_the_settings_were_set_aside_and_go_on(settings_file, capsys, tmp_path, command):
    from app.cli import main

    os.mkfifo(settings_file)
    if command[0] == "report":
        command = [*command, "--out", str(tmp_path / "r.zip")]
    box = {}
    thread = threading.Thread(target=lambda: box.update(code=main(command)), daemon=True)
    thread.start()
    thread.join(DEADLINE_S * 4)
    assert not thread.is_alive(), f"{command[0]} did not finish within {DEADLINE_S * 4} s"
    captured = capsys.readouterr()
    assert box["code"] == 0 and isinstance(json.loads(captured.out), dict)  # stdout is still the JSON alone
    assert captured.err.startswith("note: Your settings file could not be read (it is not a regular file); it was kept")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
