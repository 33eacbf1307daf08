"""The UI's state sets come from core: every state is active, idle or stopping, and each has its sentence."""

from __future__ import annotations

from app.core.server.events import ACTIVE_STATES, IDLE_STATES, STATE_SENTENCES, State


def test_every_state_is_exactly_one_of_active_idle_or_stopping():
    assert ACTIVE_STATES.isdisjoint(IDLE_STATES)
    assert set(State) == ACTIVE_STATES | IDLE_STATES | {State.STOPPING}
    assert State.STOPPING not in ACTIVE_STATES | IDLE_STATES  # neither Start nor "nothing running" while it stops
    assert set(STATE_SENTENCES) == set(State)


def test_a_state_is_its_json_value_too():
    assert State("ready") is State.READY and State.READY.value == "ready"
