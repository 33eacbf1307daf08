"""Several GPUs in the argv: -ts/-sm/-mg from a build's --help, llama-cpp-python's numbers, stored profiles."""

from __future__ import annotations

import pytest

from app.core.launch.backends import build_argv, build_argv_with_notes, embedded_backend
from app.core.launch.config import LaunchConfig
from app.core.launch.discovery import parse_help_flags
from app.core.problem import UserError
from tests.unit.core.launch.test_backends import CONFIG, NEW_HELP, OLD_HELP, flags_in, server_backend, value_after

SPLIT = CONFIG.with_changes(tensor_split=(3, 1.5), split_mode="row", main_gpu=1)


def test_llama_server_gets_the_split_flags_its_help_lists():
    argv = build_argv(SPLIT, server_backend(NEW_HELP))
    assert value_after(argv, "-ts", "--tensor-split") == "3,1.5"
    assert value_after(argv, "-sm", "--split-mode") == "row" and value_after(argv, "-mg", "--main-gpu") == "1"
    assert flags_in(argv[:-1]) <= set(parse_help_flags(NEW_HELP))


def test_defaults_add_no_split_flags():
    argv = build_argv(CONFIG, server_backend(NEW_HELP))
    assert not {"-ts", "--tensor-split", "-sm", "--split-mode", "-mg", "--main-gpu"} & set(argv)


def test_a_build_without_split_flags_says_so():
    help_text = "\n".join(line for line in NEW_HELP.splitlines() if not line.startswith(("-ts", "-sm", "-mg")))
    argv, notes = build_argv_with_notes(SPLIT, server_backend(help_text))
    assert "-ts" not in argv and "--tensor-split" not in argv
    said = " ".join(note.render("en") for note in notes)
    assert "--tensor-split" in said and "--split-mode" in said and "--main-gpu" in said


def test_old_help_lists_the_split_flags_too():
    argv = build_argv(SPLIT, server_backend(OLD_HELP))
    assert flags_in(argv[:-1]) <= set(parse_help_flags(OLD_HELP))


def test_built_in_engine_takes_the_split_as_words_and_the_mode_as_a_number():
    argv = build_argv(SPLIT.with_changes(backend="embedded", parallel=1), embedded_backend())
    at = argv.index("--tensor_split")
    assert argv[at + 1:at + 3] == ["3", "1.5"] and argv[at + 3].startswith("--")
    assert value_after(argv, "--split_mode") == "2" and value_after(argv, "--main_gpu") == "1"  # LLAMA_SPLIT_MODE_ROW
    none = build_argv(CONFIG.with_changes(backend="embedded", split_mode="none"), embedded_backend())
    assert value_after(none, "--split_mode") == "0"


def test_unknown_split_mode_is_a_user_error():
    with pytest.raises(UserError):
        build_argv(CONFIG.with_changes(split_mode="diagonal"), server_backend(NEW_HELP))


def test_split_round_trips_and_old_or_hand_edited_profiles_load():
    assert LaunchConfig.from_dict(SPLIT.to_dict()) == SPLIT
    assert SPLIT.to_dict()["tensor_split"] == [3, 1.5]
    old = LaunchConfig.from_dict({"model": "/m/a.gguf", "ctx": 2048})
    assert (old.tensor_split, old.split_mode, old.main_gpu) == ((), "layer", 0)
    for bad in ({"tensor_split": "3,1"}, {"tensor_split": [1, -1]}, {"tensor_split": [True]},
                {"split_mode": "diagonal"}, {"main_gpu": -2}, {"main_gpu": "1"}, {"tensor_split": None}):
        loaded = LaunchConfig.from_dict({"model": "/m/a.gguf", **bad})
        assert (loaded.tensor_split, loaded.split_mode, loaded.main_gpu) == ((), "layer", 0), bad
    assert CONFIG.with_changes(tensor_split=[1, 2]).tensor_split == (1, 2)
