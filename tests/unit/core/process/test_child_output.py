"""A child's output without line breaks reaches the reader in pieces: it is never held whole in memory (a hostile
llama-server printing hundreds of megabytes on one line made the reader copy the growing buffer on every read)."""

from __future__ import annotations

import sys
import threading

from app.core.process import child as child_module
from app.core.process.child import MAX_PENDING_BYTES, ChildProcess

WRITE_ONE_LONG_LINE = """
import sys
sys.stdout.write("中" * 200_000)  # 600,000 bytes, no line break
sys.stdout.write("\\nend\\n")
sys.stdout.flush()
"""


def test_a_line_without_breaks_arrives_in_pieces_that_split_no_character():
    lines: list[str] = []
    ended = threading.Event()
    child = ChildProcess([sys.executable, "-c", WRITE_ONE_LONG_LINE], on_line=lambda _stream, text: lines.append(text),
                         on_exit=lambda _child, _rc: ended.set(), register=False)
    assert ended.wait(60)
    for reader in child._readers:  # the exit can come before the readers have passed on the last bytes
        reader.join(30)
    *pieces, last = lines
    assert last == "end"
    assert len(pieces) > 1, "the long line was held whole"
    assert all(len(piece.encode()) <= MAX_PENDING_BYTES + 65536 for piece in pieces)
    assert "".join(pieces) == "中" * 200_000  # no replacement character: no piece ends inside a character


def test_the_cut_backs_off_to_the_start_of_a_character():
    data = "a中".encode()  # b"a\xe4\xb8\xad"
    assert child_module._last_char_start(data) == 1
    assert child_module._last_char_start(b"abc") == 2
