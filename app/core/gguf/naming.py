"""How the window names a model and its file type, in words a newcomer reads without a glossary.

- The file type: llama.cpp's enum name ("MOSTLY_Q4_1", "ALL_F32") or a tensor type ("Q4_K") becomes
  "4-bit (Q4_1)" / "4 位（Q4_1）": how many bits a weight has, then the exact name people search for.
- The model's title is its file name: that is what the user downloaded, what Recent, the window title and the chat
  show. A GGUF's own ``general.name`` is often a training-run id ("Smollm2 135M 8k Lc100K Mix1 Ep2" inside
  SmolLM2-135M-Instruct.Q4_1.gguf), so it is only told beside the file name, as what the file calls itself, when it
  says something the file name does not.
"""

from __future__ import annotations

import re

from app.core.text import T, Text

_PREFIXES = ("MOSTLY_", "ALL_")
_BITS = re.compile(r"^(?:I?Q|MXFP|NVFP)(?P<bits>\d+)")
_FLOAT = re.compile(r"^B?F(?P<bits>16|32|64)$")
_TERNARY = re.compile(r"^TQ\d")
_WORD = re.compile(r"[a-z]+|\d+")


def short_type_name(name: str) -> str:
    """"MOSTLY_Q4_1" -> "Q4_1"; a tensor type name ("Q4_K") is returned as it is."""
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def file_type_text(name: str | None) -> Text | None:
    """A file type in plain words with its exact name after it; None when there is nothing to say ("GUESSED")."""
    if not name or name == "GUESSED":
        return None
    short = short_type_name(name)
    floating = _FLOAT.match(short)
    if floating:
        return T("{bits}-bit, not quantized ({name})", "{bits} 位，未量化（{name}）", bits=floating["bits"], name=short)
    if _TERNARY.match(short):
        return T("ternary ({name})", "三值（{name}）", name=short)  # each weight -1, 0 or 1
    quantized = _BITS.match(short)
    if quantized:
        return T("{bits}-bit ({name})", "{bits} 位（{name}）", bits=quantized["bits"], name=short)
    return T("{name}", "{name}", name=short)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def own_name_note(file_name: str, general_name: str | None) -> Text | None:
    """What the file calls itself, when its ``general.name`` says something its file name does not (else None)."""
    if not general_name or not general_name.strip():
        return None
    if _words(general_name) <= _words(file_name):
        return None  # the same words: the file name already says it
    return T("The file calls itself “{name}” (its own name field); the app names models by their file name.",
             "该文件内部的名称字段写的是“{name}”；本应用以文件名称呼模型。", name=general_name.strip())
