"""The supervisor starts with the engine its caller already looked up (the window's model session, the probe)
instead of looking again; only for the config it was looked up for, and only for the next launch."""

from __future__ import annotations

import dataclasses

from app.core.launch.backends import embedded_backend
from app.core.launch.config import LaunchConfig
from app.core.server.supervisor import Supervisor, handed_matches


def test_a_handed_engine_is_used_by_the_next_launch_only(tmp_path):
    handed = dataclasses.replace(embedded_backend(), version_text="looked up by the session")
    config = LaunchConfig(model=str(tmp_path / "m.gguf"), backend="embedded")
    sup = Supervisor(config, backend=handed)
    try:
        assert sup._backend_for(sup.config) is handed
        assert sup._backend_for(sup.config) is not handed  # a crash's restart, a rebuilt engine: looked up again
        sup.set_config(config.with_changes(ctx=1024), handed)  # Start with new settings hands it again
        assert sup._backend_for(sup.config) is handed
    finally:
        sup.close()


def test_a_handed_engine_counts_only_for_the_engine_the_config_names():
    server = dataclasses.replace(embedded_backend(), kind="llama-server", path="/opt/llama/llama-server")
    config = LaunchConfig(model="m.gguf", backend="llama-server", server_bin="/opt/llama/llama-server")
    assert handed_matches(server, config)
    assert handed_matches(server, config.with_changes(server_bin=None))  # the default file: the one looked up
    assert not handed_matches(server, config.with_changes(server_bin="/other/llama-server"))
    assert not handed_matches(server, config.with_changes(backend="embedded", server_bin=None))
