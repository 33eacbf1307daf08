"""The share's own words and bytes, without a server: the path rewrite across chunk boundaries, who can reach a
share (never "anyone on the network" while it is bound to this computer), one answer / several said as such in
both languages, and IPv6 addresses written as URLs want them."""

from __future__ import annotations

import json

import pytest

from app.core.server.lan_share import limit_sentence, reach_sentence, share_urls
from app.core.server.path_scrub import PathScrub

MODEL = "/home/zoë/models/Qwen3 4B.Q4_K_M.gguf"


def _through(scrub: PathScrub, data: bytes, size: int) -> bytes:
    out = b"".join(scrub.feed(data[i:i + size]) for i in range(0, len(data), size))
    return out + scrub.end()


@pytest.mark.parametrize("size", [1, 3, 7, 64, 4096])
def test_the_model_path_becomes_its_file_name_whatever_the_chunks(size):
    raw = json.dumps({"model": MODEL, "model_path": MODEL}, ensure_ascii=False).encode()
    escaped = json.dumps({"data": [{"id": MODEL}]}).encode()  # the built-in engine writes \u00eb
    stream = b"".join(b'data: {"model":%s}\n\n' % json.dumps(MODEL).encode() for _ in range(5))
    for data in (raw, escaped, stream):
        out = _through(PathScrub([MODEL, ""]), data, size)
        assert b"zo" not in out and b"/home" not in out, out
        assert out.count(b"Qwen3 4B.Q4_K_M.gguf") == data.count(b"Q4_K_M.gguf")


def test_a_chunk_that_cannot_start_the_path_is_not_held_back():
    scrub = PathScrub([MODEL])
    assert scrub.feed(b'data: {"text":"hi"}\n\n') == b'data: {"text":"hi"}\n\n'  # a streamed token goes out at once
    assert scrub.feed(b'{"model":"/ho') == b'{"model":"'  # only what could start the path waits
    assert scrub.feed(b"me/other\"}") == b'/home/other"}'


def test_a_windows_path_becomes_its_file_name():
    path = "C:\\Users\\Zoë\\models\\tiny.gguf"
    out = _through(PathScrub([path]), json.dumps({"id": path}).encode(), 5)
    assert json.loads(out) == {"id": "tiny.gguf"}


def test_a_share_on_this_computer_never_says_anyone_on_the_network():
    for host in ("127.0.0.1", "::1", "localhost"):
        for lang in ("en", "zh"):
            words = reach_sentence(host).render(lang) + limit_sentence("http://127.0.0.1:8090", 1, True).render(lang)
            assert "nyone" not in words and "网络中任何" not in words and "任何人" not in words, words
        assert "this computer" in reach_sentence(host).render("en")
    assert "Anyone on the network" in reach_sentence("0.0.0.0").render("en")
    assert "网络中任何持有密钥的人" in reach_sentence("192.168.1.5").render("zh")


def test_one_answer_and_several_read_naturally():
    one, two = limit_sentence("http://h:1", 1, False), limit_sentence("http://h:1", 2, False)
    assert one.render("en") == "Shared at http://h:1: one answer at a time, the rest are asked to retry."
    assert two.render("en") == "Shared at http://h:1: at most 2 answers at once, the rest are asked to retry."
    assert "(s)" not in one.render("en") + two.render("en")
    assert one.render("zh") == "已共享于 http://h:1：一次回答一个请求，其余的会被告知稍后重试。"
    assert two.render("zh") == "已共享于 http://h:1：最多同时回答 2 个请求，其余的会被告知稍后重试。"


def test_ipv6_share_urls_are_bracketed():
    assert share_urls("::1", 8099) == ["http://[::1]:8099"]
    assert share_urls("fd00::5", 8099) == ["http://[fd00::5]:8099"]
    assert share_urls("127.0.0.1", 8099) == ["http://127.0.0.1:8099"]
