"""RPC workers in the argv: --rpc only where the build's --help lists it; the built-in engine says it cannot."""

from __future__ import annotations

from app.core.launch.backends import build_argv_with_notes, embedded_backend
from app.core.launch.config import LaunchConfig
from tests.unit.core.launch.test_backends import CONFIG, NEW_HELP, server_backend, value_after

NO_RPC_HELP = "\n".join(line for line in NEW_HELP.splitlines() if not line.startswith("--rpc"))
RPC_HELP = NO_RPC_HELP + "\n--rpc SERVERS                           comma-separated list of RPC servers (host:port)\n"
WORKERS = CONFIG.with_changes(rpc_workers=["192.0.2.7:50052", "192.0.2.8:50053"])


def test_llama_server_with_rpc_gets_the_workers_in_order():
    argv, notes = build_argv_with_notes(WORKERS, server_backend(RPC_HELP))
    assert value_after(argv, "--rpc") == "192.0.2.7:50052,192.0.2.8:50053" and not notes


def test_no_workers_no_rpc_flag():
    argv, _ = build_argv_with_notes(CONFIG, server_backend(RPC_HELP))
    assert "--rpc" not in argv


def test_a_build_without_rpc_says_so():
    argv, notes = build_argv_with_notes(WORKERS, server_backend(NO_RPC_HELP))
    assert "--rpc" not in argv and any("--rpc" in n.render("en") for n in notes)


def test_built_in_engine_says_it_cannot_use_workers_in_plain_words():
    argv, notes = build_argv_with_notes(WORKERS.with_changes(backend="embedded"), embedded_backend())
    said = " ".join(n.render("en") for n in notes)
    assert "--rpc" not in argv and "cannot use other computers" in said and "-" not in said.split("workers")[0][-3:]


def test_workers_round_trip_and_old_or_hand_edited_profiles_load():
    assert LaunchConfig.from_dict(WORKERS.to_dict()) == WORKERS
    assert WORKERS.to_dict()["rpc_workers"] == ["192.0.2.7:50052", "192.0.2.8:50053"]
    assert LaunchConfig.from_dict({"model": "/m/a.gguf"}).rpc_workers == ()
    for bad in ("192.0.2.7:50052", [1], ["no-port"], None):
        assert LaunchConfig.from_dict({"model": "/m/a.gguf", "rpc_workers": bad}).rpc_workers == ()
