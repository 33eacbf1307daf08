"""After every load the supervisor reads what really went to the GPU: real servers on this CPU-only machine, asked
for every layer, put none there, and that is said as a diagnosis (an ``offload`` event), not a silent slowdown.

Measured here: llama-server b11434 without a GPU backend, ``-ngl 99 -lv 4``, prints ``offloaded 3/3 layers to GPU``
and then only a ``CPU_Mapped`` model buffer; at the default verbosity it prints no load line at all; the built-in
engine (llama-cpp-python 0.3.36) prints the host buffers and no count."""

from __future__ import annotations

import pytest

from app.core.diagnosis.offload import CAUSE


def _offload_events(supervisor) -> list:
    return [event for event in supervisor.history if event.kind == "offload"]


@pytest.mark.slow
@pytest.mark.parametrize("backend, extra", [("llama-server", ("-lv", "4")), ("llama-server", ()), ("embedded", ())])
def test_every_layer_asked_on_a_cpu_only_engine_is_diagnosed(running_server, backend, extra):
    supervisor = running_server(backend, gpu_layers=99, extra_args=extra)
    events = _offload_events(supervisor)
    assert len(events) == 1, [e.to_dict() for e in supervisor.history if e.kind != "log"]
    diagnosis = events[0].payload.diagnosis
    assert diagnosis is supervisor.offload_diagnosis and diagnosis.cause == CAUSE
    assert diagnosis.message.render("en").startswith("The engine put no") or \
        diagnosis.message.render("en").startswith("The engine put none of the 3 model layers")
    assert "engine backends: CPU" in diagnosis.evidence
    assert supervisor.last_diagnosis is None, "the server runs: this explains no stop"
    if extra:  # the log's own words are the evidence: it claims 3/3, but only a host buffer holds them
        assert any("offloaded 3/3 layers to GPU" in line for line in diagnosis.evidence)
        assert any("CPU_Mapped model buffer size" in line for line in diagnosis.evidence)


@pytest.mark.slow
def test_no_layers_asked_is_no_diagnosis(running_server):
    supervisor = running_server("llama-server", gpu_layers=0, extra_args=("-lv", "4"))
    assert _offload_events(supervisor) == [] and supervisor.offload_diagnosis is None
