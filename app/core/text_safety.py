"""Untrusted text stays text: strings from a model file, a file name or a server answer lose what a terminal would
obey instead of show (escape sequences that retitle the window or clear the screen, carriage returns that overwrite
a line, C0/C1 controls, bidi overrides that reorder what is read), before they reach a terminal or a widget."""

from __future__ import annotations

import re

# ESC [ ... final byte (CSI), ESC ] ... BEL or ESC \ (OSC), ESC P/X/^/_ ... ESC \ (DCS, SOS, PM, APC), ESC + one byte
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?", re.DOTALL)
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROLS = "".join(chr(c) for c in (*range(0x00, 0x20), 0x7f, *range(0x80, 0xa0))) + _BIDI
_DROP_MULTILINE = str.maketrans({c: None for c in _CONTROLS if c not in "\n\t"})
_DROP_ONE_LINE = str.maketrans({**{c: None for c in _CONTROLS}, "\n": " ", "\t": " ", "\r": " "})


def inert(value: str, *, one_line: bool = True) -> str:
    """``value`` without escape sequences, control characters or bidi overrides. ``one_line``: a name or a file name,
    whose line breaks and tabs become spaces (no fake line can follow it); else newlines and tabs are kept."""
    without_sequences = _ESCAPE_SEQUENCE.sub("", value)
    return without_sequences.translate(_DROP_ONE_LINE if one_line else _DROP_MULTILINE)
