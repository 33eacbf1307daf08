"""What a newcomer types by mistake: one sentence and a next step on stderr, exit 1 or 2, never a traceback.

Commands run in-process through the real dispatcher (an uncaught exception fails the test); none of these
inputs may get as far as starting a server.
"""

from __future__ import annotations

import pytest

from app.cli import main


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory, tiny_model):
    folder = tmp_path_factory.mktemp("bad")
    data = tiny_model.read_bytes()
    (folder / "empty.gguf").write_bytes(b"")
    (folder / "notes.gguf").write_text("hello, this is not a model\n")
    (folder / "cut.gguf").write_bytes(data[: len(data) // 2])
    (folder / "a folder.gguf").mkdir()
    chinese = folder / "模型 文件夹"
    chinese.mkdir()
    (chinese / "我的 模型.gguf").write_bytes(data)
    return folder


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


FILE_PROBLEMS = {
    "missing.gguf": "does not exist",
    "a folder.gguf": "is a folder, not a model file",
    "empty.gguf": "is empty (0 bytes)",
    "notes.gguf": "is not a GGUF model file",
    "cut.gguf": "data is not within the file bounds",
}


@pytest.mark.parametrize("command", ["serve", "selftest", "plan", "probe"])
@pytest.mark.parametrize("name", sorted(FILE_PROBLEMS))
def test_a_file_that_cannot_load_is_refused_before_any_server_starts(capsys, bad_files, command, name):
    code, out, err = cli(capsys, command, str(bad_files / name))
    assert code == 1
    assert FILE_PROBLEMS[name] in err and "next step:" in err
    assert "Starting" not in out and "Test load" not in err


def test_doctor_reports_each_file_problem_as_a_failed_check(capsys, bad_files):
    for name, sentence in FILE_PROBLEMS.items():
        code, out, _ = cli(capsys, "doctor", str(bad_files / name), "--no-sha256")
        assert code == 1 and "[FAIL]" in out and sentence in out, name


def test_a_path_with_chinese_characters_and_spaces_works(capsys, bad_files):
    model = str(bad_files / "模型 文件夹" / "我的 模型.gguf")
    assert cli(capsys, "doctor", model, "--no-sha256")[0] == 0
    code, out, _ = cli(capsys, "plan", model)
    assert code == 0 and "fit" in out


def test_chinese_messages_with_lang_zh(capsys, bad_files):
    code, _, err = cli(capsys, "--lang", "zh", "plan", str(bad_files / "missing.gguf"))
    assert code == 1 and "不存在" in err


@pytest.mark.parametrize("argv, words", [
    (["serve", "M", "--ctx", "-5"], "--ctx: must be a positive number"),
    (["serve", "M", "--ctx", "abc"], "--ctx: not a whole number: 'abc'"),
    (["serve", "M", "--ctx", "99999999999"], "more than any model supports"),
    (["selftest", "M", "--ctx", "99999999999"], "more than any model supports"),
    (["serve", "M", "--gpu-layers", "-7"], "--gpu-layers: must be -1 (all layers) or 0 or more"),
    (["serve", "M", "--port", "70000"], "port numbers go from 1 to 65535, not 70000"),
    (["serve", "M", "--port", "0"], "port numbers go from 1 to 65535, not 0"),
    (["serve", "M", "--parallel", "0"], "--parallel: must be a positive number"),
    (["plan", "M", "--vram-budget", "8X"], "not a size: '8X'"),
    (["plan", "M", "--gpu-layers", "-2"], "--gpu-layers: must be -1"),
    (["probe", "M", "--load-timeout", "-1"], "must be more than 0 seconds"),
    (["probe", "M", "--ctx", "0"], "--ctx: must be a positive number"),
    (["selftest", "M", "--rounds", "0"], "--rounds: must be a positive number"),
    (["selftest", "--url", "localhost:8080"], "not a web address: 'localhost:8080'"),
    (["selftest", "--url", "http://127.0.0.1:99999"], "is not between 1 and 65535"),
    (["selftest"], "give either a MODEL file or --url"),
    (["doctor"], "the following arguments are required: model"),
    (["launch", "M"], "invalid choice: 'launch'"),
])
def test_nonsense_options_are_usage_errors_in_two_lines(capsys, argv, words):
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert words in err and "next step:" in err
    assert "usage:" not in err and len(err.strip().splitlines()) == 2


def test_a_huge_gpu_layer_count_means_all_layers(capsys, tiny_model):
    code, out, _ = cli(capsys, "plan", str(tiny_model), "--gpu-layers", "999", "--vram-budget", "8G")
    assert code == 0 and "2+out" in out


def test_missing_server_binary(capsys, tiny_model, tmp_path):
    code, _, err = cli(capsys, "serve", str(tiny_model), "--backend", "llama-server", "--server-bin", "/nonexistent")
    assert code == 1 and "llama-server was not found at /nonexistent" in err and "next step:" in err
    assert "(on the command line: --server-bin PATH, or --backend embedded)" in err  # the CLI names its flags


def test_a_program_that_is_not_llama_server_is_refused(capsys, tiny_model, tmp_path):
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\necho 'usage: something else'\n")
    fake.chmod(0o755)
    code, _, err = cli(capsys, "serve", str(tiny_model), "--backend", "llama-server", "--server-bin", str(fake))
    assert code == 1 and "is not llama-server: it does not take a model file" in err
    assert "--help lists no --model option" in err and "--server-bin PATH, or --backend embedded" in err


@pytest.mark.parametrize("host, evidence", [("999.1.1.1", "gaierror"), ("192.0.2.55", "OSError")])
def test_a_host_that_is_not_this_computer_is_one_sentence(capsys, tiny_model, host, evidence):
    code, _, err = cli(capsys, "serve", str(tiny_model), "--host", host, "--api-key", "k", "--no-restart")
    assert code == 1
    assert f"cannot listen on {host}: it is not an address of this computer" in err and evidence in err


def test_selftest_with_nothing_listening(capsys):
    code, _, err = cli(capsys, "selftest", "--url", "http://127.0.0.1:1")
    assert code == 1 and "Nothing answers at http://127.0.0.1:1" in err and "next step:" in err


@pytest.mark.parametrize("port", [-1, 70000])
def test_a_port_outside_the_range_is_a_user_error_in_core_too(tiny_model, port):
    from app.core.launch.config import LaunchConfig
    from app.core.launch.ports import settle_network
    from app.core.problem import UserError

    with pytest.raises(UserError) as caught:
        settle_network(LaunchConfig(model=str(tiny_model), port=port))
    assert f"Port {port} does not exist" in caught.value.message.render("en")


def test_usage_errors_and_labels_follow_lang_zh(capsys):
    from app.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--lang", "zh", "serve", "x.gguf", "--ctx", "abc"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "错误" in err and "下一步" in err and "Traceback" not in err


def test_missing_qt_system_library_is_a_sentence_not_a_traceback(monkeypatch, capsys):
    import builtins

    from app.__main__ import main  # the entry point picks the window when no command is given

    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name == "app.ui.shell.main":
            raise ImportError("libEGL.so.1: cannot open shared object file: No such file or directory")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing_import)
    assert main([]) == 1
    err = capsys.readouterr().err
    assert "libEGL.so.1" in err and "apt-get install" in err and "Traceback" not in err
