"""The model session the window's steps share, the one first-run context rule, and saved configs read back."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

from app.cli import plan as cli_plan
from app.cli import serve as cli_serve
from app.core.launch.config import LaunchConfig
from app.core.problem import Check, Status
from app.core.session import (
    FIRST_RUN_CTX,
    SWITCH_KEEP,
    SWITCH_RESTART,
    SWITCH_STOP,
    CheckedModel,
    ModelSession,
    ask_before_switch,
    first_run_ctx,
    launch_config_for,
    switch_action,
    with_engine,
)
from app.core.text import T


def _info(trained: int | None) -> SimpleNamespace:
    return SimpleNamespace(context_length=trained, path="/m.gguf", block_count=2)


def test_first_run_ctx_is_4096_never_more_than_trained():
    assert first_run_ctx(_info(131072)) == FIRST_RUN_CTX == 4096
    assert first_run_ctx(_info(2048)) == 2048
    assert first_run_ctx(_info(None)) == 4096 and first_run_ctx(None) == 4096
    # with no GPU to plan for, plan and probe search the context: they start from the whole training length
    assert first_run_ctx(_info(131072), context_is_searched=True) == 131072
    assert first_run_ctx(_info(None), context_is_searched=True) == 4096


def test_window_plan_and_serve_use_the_one_rule(make_model):
    path = make_model("short.gguf", n_layers=2, ctx_train=2048)
    info = cli_serve.read_model(str(path))
    assert launch_config_for(str(path), info, None).ctx == first_run_ctx(info) == 2048
    gpu, cpu = SimpleNamespace(gpus=[object()]), SimpleNamespace(gpus=[])
    assert cli_plan.default_ctx(info, gpu, None) == first_run_ctx(info)
    assert cli_plan.default_ctx(info, cpu, 8 << 30) == first_run_ctx(info)  # --vram-budget plans for a GPU
    assert cli_plan.default_ctx(info, cpu, None) == first_run_ctx(info, context_is_searched=True)
    parser = argparse.ArgumentParser()
    cli_serve.add_parser(parser.add_subparsers())
    args = parser.parse_args(["serve", str(path)])
    assert cli_serve.config_from_args(args).ctx == 2048  # was a fixed 4096, above what the model was trained for
    args = parser.parse_args(["serve", str(path), "--ctx", "1024"])
    assert cli_serve.config_from_args(args).ctx == 1024


def test_saved_config_is_read_like_the_settings_file(tiny_model):
    from app.core.gguf.reader import read_model_info

    info = read_model_info(tiny_model)
    fresh = launch_config_for(str(tiny_model), info, None)
    assert fresh.model == str(tiny_model) and fresh.ctx == min(4096, info.context_length)
    saved = LaunchConfig(model="/elsewhere.gguf", ctx=1536, threads=2).to_dict()
    restored = launch_config_for(str(tiny_model), info, saved)
    assert (restored.model, restored.ctx, restored.threads) == (str(tiny_model), 1536, 2)
    hand_edited = {"ctx": "not a number", "parallel": None, "threads": "two", "flash_attn": True, "x": 1,
                   "gpu_layers": True, "extra_args": ["--verbose"], "api_key": 7, "server_bin": None}
    repaired = launch_config_for(str(tiny_model), info, hand_edited)
    assert repaired == fresh.with_changes(flash_attn=True, extra_args=("--verbose",))


def _checked(path: str, *, error: bool = False) -> CheckedModel:
    status = Status.ERROR if error else Status.OK
    return CheckedModel(path, _info(8192), [Check("header", status, T("x", "x"))])


def test_opening_another_model_forgets_the_plan_backend_and_probe():
    session = ModelSession()
    first = session.open("/a.gguf")
    assert session.set_checked(_checked("/a.gguf")) and session.usable
    config = session.use_profile({"ctx": 2048}, {"saved": 1})
    assert config is not None and config.model == "/a.gguf" and config.ctx == 2048
    session.set_plan(object(), config)
    session.set_backend(SimpleNamespace(kind="embedded", path=None))
    session.set_probe(object())
    assert session.is_for("/a.gguf") and not session.is_for("/b.gguf")

    second = session.open("/b.gguf")
    assert second == first + 1 and session.path == "/b.gguf"
    assert (session.checked, session.config, session.plan, session.plan_config, session.backend, session.probe,
            session.saved_probe) == (None,) * 7
    assert not session.set_checked(_checked("/a.gguf"))  # the older file's late answer is dropped
    assert session.checked is None and not session.is_for("/a.gguf")


def test_a_model_that_fails_its_checks_gets_no_settings():
    session = ModelSession()
    session.open("/bad.gguf")
    assert session.set_checked(_checked("/bad.gguf", error=True))
    assert not session.usable and session.use_profile(None, None) is None and session.config is None


def test_backend_for_reuses_only_the_same_engine_choice():
    session = ModelSession()
    session.open("/a.gguf")
    config = LaunchConfig(model="/a.gguf", backend="llama-server", server_bin="/opt/llama-server")
    assert session.backend_for(config) is None
    backend = SimpleNamespace(kind="llama-server", path="/opt/llama-server")
    session.set_backend(backend)
    assert session.backend_for(config) is backend
    assert session.backend_for(config.with_changes(server_bin="/other/llama-server")) is None
    assert session.backend_for(config.with_changes(backend="embedded", server_bin=None)) is None


def test_the_settings_engine_wins_over_the_one_a_saved_config_names():
    session = ModelSession()
    session.open("/a.gguf")
    session.set_checked(_checked("/a.gguf"))
    saved = {"ctx": 2048, "backend": "embedded", "server_bin": None}
    config = session.use_profile(saved, None, ("llama-server", "/opt/llama-server"))
    assert (config.backend, config.server_bin, config.ctx) == ("llama-server", "/opt/llama-server", 2048)
    assert session.use_profile(saved, None).backend == "embedded"  # no engine given: the saved one
    assert with_engine(config, ("embedded", None)) == config.with_changes(backend="embedded", server_bin=None)


def test_opening_another_model_asks_only_while_a_server_runs_another_one():
    assert ask_before_switch("/a.gguf", True, "/b.gguf")
    assert not ask_before_switch("/a.gguf", True, "/x/../a.gguf")  # the same file: nothing to ask
    assert not ask_before_switch("/a.gguf", False, "/b.gguf")  # stopped: the next Start runs the new model
    assert not ask_before_switch(None, True, "/b.gguf")


def test_each_answer_to_the_switch_question_does_one_thing():
    assert switch_action(SWITCH_RESTART, None) is None  # waits for the new model's checks
    assert switch_action(SWITCH_RESTART, True) == SWITCH_RESTART
    assert switch_action(SWITCH_RESTART, False) == SWITCH_STOP  # the new one cannot run, the old one is not kept
    assert switch_action(SWITCH_STOP, None) == switch_action(SWITCH_STOP, True) == SWITCH_STOP
    assert switch_action(SWITCH_KEEP, True) == SWITCH_KEEP
