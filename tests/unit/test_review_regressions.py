"""Regressions found in review of app/core: each test failed before its fix."""

from __future__ import annotations

import psutil

from app.core.server_log import ServerLog


def test_a_late_line_after_close_is_kept_in_memory_but_does_not_reopen_the_log_file(tmp_path):
    log = ServerLog("late", directory=tmp_path)
    log.append("stderr", "first")
    log.close()
    log.append("stderr", "printed by a dying child after close()")
    open_logs = [f.path for f in psutil.Process().open_files() if f.path.startswith(str(tmp_path))]
    assert open_logs == []
    assert [line.text for line in log.tail()] == ["first", "printed by a dying child after close()"]
    assert "dying child" not in (tmp_path / "late.log").read_text(encoding="utf-8")
