"""What the spill rule (app/core/probe/spill.py) needs from a real test load: llama-server's own generation speed and
the number of tokens it was measured on (its ``timings.predicted_n``), on a real server child."""

from __future__ import annotations

import pytest

from app.core.launch.config import LaunchConfig
from app.core.probe.attempt import AttemptLimits, run_attempt
from app.core.probe.request import GENERATED_TOKENS
from app.core.probe.spill import MIN_GENERATED_TOKENS, judge_spill


@pytest.mark.slow
def test_a_real_attempt_reports_its_generation_speed_and_the_tokens_behind_it(tiny_model, llama_server_bin):
    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=llama_server_bin, ctx=512,
                          threads=1, batch=128, ubatch=128)
    attempt = run_attempt(config, AttemptLimits(load_timeout_s=120, request_timeout_s=120))
    assert attempt.ok, attempt.reason
    assert attempt.generation_tps is not None and attempt.generation_tps > 0
    # ignore_eos makes llama-server generate every asked token, so the speed is judged on all of them
    assert attempt.generated_tokens == GENERATED_TOKENS >= MIN_GENERATED_TOKENS
    assert judge_spill(attempt, [], 2) is False and attempt.ok  # nothing to compare with: never a spill
