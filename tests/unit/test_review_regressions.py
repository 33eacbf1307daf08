"""Regressions found in review of app/core: each test failed before its fix."""

from __future__ import annotations

import psutil
import pytest

from app.core.process.child_log import ServerLog


def test_a_late_line_after_close_is_kept_in_memory_but_does_not_reopen_the_log_file(tmp_path):
    log = ServerLog("late", directory=tmp_path)
    log.append("stderr", "first")
    log.close()
    log.append("stderr", "printed by a dying child after close()")
    open_logs = [f.path for f in psutil.Process().open_files() if f.path.startswith(str(tmp_path))]
    assert open_logs == []
    assert [line.text for line in log.tail()] == ["first", "printed by a dying child after close()"]
    assert "dying child" not in (tmp_path / "late.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("requested, largest", [(100, 100), (1000, 1000), (4096, 4096)])
def test_the_context_search_never_tries_more_than_was_asked_and_can_reach_it(tiny_model, requested, largest):
    from app.core.gguf.reader import read_model_info
    from app.core.hardware.scan import scan_hardware
    from app.core.launch.config import LaunchConfig
    from app.core.probe import ProbeOptions, run_probe
    from app.core.probe.attempt import Attempt

    tried = []

    def loads_everything(config, limits, cancel):  # a simulated loader with no memory limit
        tried.append(config.ctx)
        return Attempt(config.gpu_layers, config.ctx, ok=True)

    hw = scan_hardware()
    hw.gpus = []
    result = run_probe(read_model_info(tiny_model), LaunchConfig(model=str(tiny_model), ctx=requested), hw,
                       ProbeOptions(use_cache=False), runner=loads_everything)
    assert max(tried) == largest and result.recommendation.ctx == largest


def test_a_child_still_starts_and_is_tracked_when_its_pid_file_cannot_be_written(app_home):
    import sys

    from app.core.paths import data_dir
    from app.core.process.child import ChildProcess

    (data_dir() / "children").write_text("a file where the pid-file folder should be")  # register() fails
    lines = []
    child = ChildProcess([sys.executable, "-c", "print('hello')"], on_line=lambda s, t: lines.append(t),
                         on_exit=lambda c, rc: None)
    assert child.wait(10) == 0 and lines == ["hello"]
