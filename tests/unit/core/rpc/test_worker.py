"""Worker addresses as a user types them."""

from __future__ import annotations

import pytest

from app.core.problem import UserError
from app.core.rpc.worker import Worker, parse_worker, parse_workers


def test_host_and_port_or_the_default_port():
    assert parse_worker(" 192.0.2.7:50053 ") == Worker("192.0.2.7", 50053)
    assert parse_worker("studio.local").address == "studio.local:50052"


def test_a_list_keeps_order_and_drops_repeats():
    assert [w.address for w in parse_workers("b:2, a:1,,b:2")] == ["b:2", "a:1"]


@pytest.mark.parametrize("text", ["a:0", "a:70000", ":50052", "a b:1", "a:x", "::1:50052"])
def test_bad_addresses_are_a_plain_sentence(text):
    with pytest.raises(UserError) as caught:
        parse_worker(text)
    assert "not a worker address" in caught.value.message.render("en")


def test_more_than_llama_cpp_takes():
    with pytest.raises(UserError):
        parse_workers([f"h{i}:1" for i in range(17)])
