"""Metadata as llama.cpp's loader reads it: typed look-ups that fail where the loader fails.

llama.cpp reads each key with one expected GGUF type and stops at a key of another type, even an
optional one; a per-layer key is a scalar or an array of exactly ``block_count`` items; a key whose
name contains a NUL byte is matched only up to that byte (it is compared as a C string).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.gguf.loader_facts import (
    ARRAY,
    BOOL,
    F32,
    I32,
    MAX_LAYERS,
    STRING,
    TYPE_NAMES,
    U16,
    U32,
    U64,
    key_words,
    type_name,
)
from app.core.gguf.model_info import ModelInfo
from app.core.text import T, Text

_KIND_TYPES = {"u32": U32, "u16": U16, "i32": I32, "f32": F32, "bool": BOOL, "str": STRING}
_UINT32 = 0xFFFFFFFF
# item types an int / float / string array may hold (get_arr); anything else is refused outright
_ARRAY_ITEM_OK = {"u32": (U32, I32), "u32_or_bool": (U32, I32, BOOL), "f32": (F32,), "str": (STRING,), "u64": (U64,)}
_ARRAY_ITEM_ANY = (U32, I32, U64, F32, STRING)


@dataclass
class LoadStop(Exception):
    """Where llama.cpp's loader would stop: a sentence for the user and the raw fact as evidence."""

    message: Text
    evidence: tuple[str, ...] = ()
    check_id: str = "loader_metadata"
    next_step: Text | None = None  # None: "download the file again"

    def __str__(self) -> str:
        return self.message.render("en")


DAMAGED_FIX = T("Download the file again; this copy is damaged.", "请重新下载该文件；当前副本已损坏。")


def missing_key(key: str, arch: str | None) -> LoadStop:
    en, zh = key_words(key, arch)
    return LoadStop(_sentence("missing", en, zh), (f"missing key {key}",))


def _sentence(kind: str, en: str, zh: str, **extra: Any) -> Text:
    if kind == "missing":
        return T("This file is damaged: it lacks a setting the model needs ({what}).",
                 "文件已损坏：缺少模型必需的设置（{what_zh}）。", what=en, what_zh=zh)
    if kind == "type":
        return T("This file is damaged: a setting ({what}) holds the wrong kind of value for llama.cpp.",
                 "文件已损坏：某个设置（{what_zh}）的取值类型不符合 llama.cpp 的要求。", what=en, what_zh=zh)
    if kind == "length":
        return T("This file is damaged: the per-layer setting {what} has {got} entries for {n} layers.",
                 "文件已损坏：逐层设置 {what_zh} 有 {got} 项，但模型有 {n} 层。", what=en, what_zh=zh, **extra)
    raise ValueError(kind)


def wrong_type(key: str, arch: str | None, found: str, expected: str) -> LoadStop:
    en, zh = key_words(key, arch)
    return LoadStop(_sentence("type", en, zh), (f"key {key} has type {found}, llama.cpp expects {expected}",))


@dataclass
class Meta:
    """Typed, llama.cpp-faithful access to a ModelInfo's metadata."""

    info: ModelInfo
    arch: str | None = None
    _names: dict[str, str] = field(default_factory=dict)  # C-string name -> first key with that name

    def __post_init__(self) -> None:
        for key in self.info.value_types:
            self._names.setdefault(key.split("\0", 1)[0], key)

    # --- raw facts ----------------------------------------------------------------------------

    def find(self, key: str) -> str | None:
        """The stored key llama.cpp's gguf_find_key returns for ``key`` (None when absent)."""
        return self._names.get(key)

    def type_of(self, key: str) -> int | None:
        stored = self.find(key)
        return None if stored is None else self.info.value_types[stored]

    def item_type(self, key: str) -> int | None:
        stored = self.find(key)
        return None if stored is None else self.info.array_types.get(stored)

    def length(self, key: str) -> int | None:
        stored = self.find(key)
        return None if stored is None else self.info.array_lengths.get(stored)

    def value(self, key: str) -> Any:
        stored = self.find(key)
        if stored is None:
            return None
        if self.info.value_types[stored] == ARRAY:
            return self.info.arrays.get(stored)
        return self.info.metadata.get(stored)

    def akey(self, suffix: str) -> str:
        return f"{self.arch}.{suffix}"

    # --- llama_model_loader::get_key / get_arr / get_key_or_arr ------------------------------------

    def get(self, key: str, kind: str, required: bool = False) -> Any:
        """A scalar of exactly the GGUF type ``kind`` (u32, u16, f32, bool, str); None when absent."""
        found = self.type_of(key)
        if found is None:
            if required:
                raise missing_key(key, self.arch)
            return None
        expected = _KIND_TYPES[kind]
        if found != expected:
            raise wrong_type(key, self.arch, TYPE_NAMES.get(found, str(found)), TYPE_NAMES[expected])
        return self.value(key)

    def get_array(self, key: str, kind: str, required: bool = False) -> list | None:
        """An array (get_arr into a vector): absent or not an array is "not there"; items of a wrong type stop."""
        if self.type_of(key) != ARRAY:
            if required:
                raise missing_key(key, self.arch)
            return None
        self._check_items(key, kind)
        value = self.value(key)
        return value if value is not None else []

    def get_per_layer(self, key: str, kind: str, n_layers: int, required: bool = False) -> list | None:
        """A scalar repeated for every layer, or an array of exactly ``n_layers`` items (get_key_or_arr)."""
        found = self.type_of(key)
        if found is None:
            if required:
                raise missing_key(key, self.arch)
            return None
        if n_layers > MAX_LAYERS:
            raise LoadStop(T("This file is damaged: it claims more layers than llama.cpp supports.",
                             "文件已损坏：声称的层数超出 llama.cpp 的支持范围。"),
                           (f"n_layers={n_layers} for key {key}",))
        if found == ARRAY:
            got = self.length(key) or 0
            if got != n_layers:
                en, zh = key_words(key, self.arch)
                raise LoadStop(_sentence("length", en, zh, got=got, n=n_layers),
                               (f"key {key} has {got} items, expected {n_layers}",))
            self._check_items(key, "u32_or_bool" if kind == "u32" else kind)
            values = self.value(key) or []
            if kind == "u32":
                values = [int(v) & _UINT32 if not isinstance(v, bool) else int(v) for v in values]
            return list(values)
        value = self.get(key, kind, required)
        return [value] * n_layers

    def _check_items(self, key: str, kind: str) -> None:
        item = self.item_type(key)
        if item not in _ARRAY_ITEM_ANY and not (kind == "u32_or_bool" and item == BOOL):
            raise wrong_type(key, self.arch, f"array of {type_name(item, str(item))}", "an array of numbers or text")
        if item not in _ARRAY_ITEM_OK[kind]:
            raise wrong_type(key, self.arch, f"array of {type_name(item, str(item))}",
                             "array of " + "/".join(TYPE_NAMES[t] for t in _ARRAY_ITEM_OK[kind]))


def as_u32(value: Any) -> int:
    """A number as llama.cpp's uint32 holds it."""
    return int(value) & _UINT32
