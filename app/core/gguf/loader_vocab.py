"""The tokenizer as llama.cpp's vocabulary loader reads it (llama_vocab::impl::load).

It needs tokenizer.ggml.model (a type it knows) and tokenizer.ggml.tokens (a list of text);
scores and token types, when present, must be lists of the right type at least as long as the
token list; BPE tokenizers need their merges and a known pre-tokenizer. The token list is also
read once more, in one read of exactly its bytes: two tokens with the same text make llama.cpp abort
(GGML_ASSERT on its token maps), and a token typed "byte" must look like <0xNN>.
"""

from __future__ import annotations

import struct
from array import array

from app.core.gguf.loader_facts import (
    ARRAY,
    BPE_MODELS,
    F32,
    I8,
    I32,
    MAX_TOKENS_SCANNED,
    PRE_TOKENIZERS,
    STRING,
    TOKEN_ID_KEYS,
    TOKEN_TYPE_BYTE,
    TOKENIZER_BOOL_KEYS,
    TOKENIZER_MODELS,
    TYPE_NAMES,
    U8,
    key_words,
    type_name,
)
from app.core.gguf.loader_meta import LoadStop, Meta, wrong_type
from app.core.text import T

MAX_SCAN_BYTES = 1 << 30  # token lists bigger than this are not re-read
_PHI3_TOKENS = (b"</s>", b"<unk>", b"<s>", b"<|endoftext|>")


def _stop(en: str, zh: str, evidence: str, **params) -> LoadStop:
    return LoadStop(T(en, zh, **params), (evidence,), check_id="tokenizer")


def _list_problem(key: str, arch: str | None, en: str, zh: str, evidence: str, **params) -> LoadStop:
    what_en, what_zh = key_words(key, arch)
    return _stop(en, zh, evidence, what=what_en, what_zh=what_zh, **params)


def _require_list(meta: Meta, key: str, item_types: tuple[int, ...]) -> None:
    if meta.type_of(key) != ARRAY or meta.item_type(key) not in item_types:
        found = type_name(meta.type_of(key))
        if meta.type_of(key) == ARRAY:
            found = f"array of {type_name(meta.item_type(key))}"
        raise _list_problem(key, meta.arch, "This file is damaged: llama.cpp cannot read its {what} (stored as the "
                            "wrong kind of list).", "文件已损坏：llama.cpp 无法读取其{what_zh}（列表格式不对）。",
                            f"{key} is {found}, expected array of " + "/".join(TYPE_NAMES[t] for t in item_types))


def _at_least_as_long(meta: Meta, key: str, n_tokens: int) -> None:
    n = meta.length(key) or 0
    if n < n_tokens:
        raise _list_problem(key, meta.arch,
                            "This file is damaged: its {what} list has {n} entries for {tokens} tokens.",
                            "文件已损坏：其{what_zh}列表只有 {n} 项，而词元有 {tokens} 个。",
                            f"{key} has {n} items, tokenizer.ggml.tokens has {n_tokens}", n=n, tokens=n_tokens)


def _read_span(path: str, start: int, end: int) -> bytes | None:
    try:
        with open(path, "rb") as stream:
            stream.seek(start)
            data = stream.read(end - start)
    except OSError:
        return None
    return data if len(data) == end - start else None  # the file changed since it was read


def _texts(data: bytes, n_tokens: int, big_endian: bool) -> list[bytes] | None:
    """The raw texts of ``n_tokens`` length-prefixed strings in ``data`` (the reader has checked every length)."""
    unpack = struct.Struct(">Q" if big_endian else "<Q").unpack_from
    texts, p = [], 0
    append = texts.append
    try:
        for _ in range(n_tokens):
            q = p + 8 + unpack(data, p)[0]
            append(data[p + 8:q])
            p = q
    except struct.error:
        return None
    return texts if p <= len(data) else None


def _as_loaded(texts: list[bytes]) -> list[bytes]:
    """Token texts as llama.cpp keeps them: cut at the first NUL byte, an empty one named "[EMPTY_<index>]"."""
    out = []
    for index, text in enumerate(texts):
        text = text.split(b"\0", 1)[0]
        out.append(text or f"[EMPTY_{index}]".encode())
    return out


def _duplicate(texts: list[bytes]) -> int:
    seen: set[bytes] = set()
    for index, text in enumerate(texts):
        if text in seen:
            return index
        seen.add(text)
    return -1


def scan_tokens(meta: Meta, n_tokens: int, model: str, check_types: bool) -> set[bytes] | None:
    """Read the token texts once, as llama.cpp sees them; stop at the first duplicate or malformed byte token.
    Returns the set of texts, or None when the list could not be scanned (too big, or the file changed)."""
    info = meta.info
    key = meta.find("tokenizer.ggml.tokens") or ""
    start, end = info.array_offsets.get(key), info.array_ends.get(key)
    if start is None or end is None or n_tokens > MAX_TOKENS_SCANNED or end - start > MAX_SCAN_BYTES:
        return None
    data = _read_span(info.path, start, end)
    texts = _texts(data, n_tokens, info.big_endian) if data is not None else None
    if texts is None:
        return None
    if b"\0" in b"".join(texts) or b"" in texts:  # rare: only then are texts rewritten the way llama.cpp does
        texts = _as_loaded(texts)
    unique = set(texts)
    if len(unique) != len(texts):
        index = _duplicate(texts)
        shown = texts[index][:40].decode("utf-8", errors="replace")
        raise _stop("This file is damaged: two entries of its vocabulary are the same ('{text}'); llama.cpp "
                    "stops with an assertion on such files.",
                    "文件已损坏：词表中有两个相同的词元（“{text}”）；llama.cpp 会因断言失败而中止。",
                    f"duplicate token {shown!r} at index {index}", text=shown)
    types = _token_types(meta, n_tokens) if check_types else None
    if types is not None:
        for index, kind in enumerate(types):
            if kind == TOKEN_TYPE_BYTE and (len(texts[index]) < 3 or model == "bert"):
                raise _stop("This file is damaged: token {index} is marked as a byte token but is not written "
                            "like one ('{text}').",
                            "文件已损坏：第 {index} 个词元被标记为字节词元，但写法不符（“{text}”）。",
                            f"byte token {texts[index]!r} at index {index}", index=index,
                            text=texts[index].decode("utf-8", errors="replace"))
    return unique


def _token_types(meta: Meta, n_tokens: int) -> array | None:
    start = meta.info.array_offsets.get(meta.find("tokenizer.ggml.token_type") or "")
    if start is None:
        return None
    data = _read_span(meta.info.path, start, start + 4 * n_tokens)
    if data is None:
        return None
    values = array("i")
    values.frombytes(data)
    if meta.info.big_endian:
        values.byteswap()
    return values


def _charsmap(meta: Meta) -> None:
    key = "tokenizer.ggml.precompiled_charsmap"
    if meta.find(key) is None:
        return
    _require_list(meta, key, (I8, U8))
    n = meta.length(key) or 0
    head = b""
    offset = meta.info.array_offsets.get(meta.find(key) or "")
    if n >= 4 and offset is not None:
        try:
            with open(meta.info.path, "rb") as stream:
                stream.seek(offset)
                head = stream.read(4)
        except OSError:
            return
    if len(head) < 4 or int.from_bytes(head, "little") + 4 >= n:
        raise _stop("This file is damaged: its tokenizer's character map is cut short.",
                    "文件已损坏：分词器的字符映射表不完整。", f"{key} has {n} bytes")


def check_vocab(meta: Meta) -> int:
    """The vocabulary size llama.cpp will use; LoadStop where its vocabulary loader stops."""
    model = meta.get("tokenizer.ggml.model", "str", required=True)
    pre = meta.get("tokenizer.ggml.pre", "str")
    meta.get("tokenizer.ggml.token_type_count", "u32")
    model = (model or "").split("\0", 1)[0]
    pre = (pre or "").split("\0", 1)[0]
    if model in ("no_vocab", "none"):
        return meta.get(meta.akey("vocab_size"), "u32") or 0
    if model not in TOKENIZER_MODELS:
        raise _stop("This file uses a tokenizer type llama.cpp does not know ('{model}'); the name may be damaged.",
                    "该文件使用了 llama.cpp 不认识的分词器类型（“{model}”）；名称可能已损坏。",
                    f"tokenizer.ggml.model={model[:40]!r}", model=model[:40])
    if model in BPE_MODELS:
        if meta.find("tokenizer.ggml.merges") is None:
            if model == "gemma4" or pre != "kimi-k2":
                raise _list_problem("tokenizer.ggml.merges", meta.arch, "This file is damaged: its {what} are missing.",
                                    "文件已损坏：缺少{what_zh}。", "missing key tokenizer.ggml.merges")
        else:
            _require_list(meta, "tokenizer.ggml.merges", (STRING,))
        if model == "gemma4":
            pre = "gemma4"
        if pre and pre not in PRE_TOKENIZERS:
            stop = _stop("This file uses a pre-tokenizer llama.cpp does not know ('{pre}'); the name may be damaged, "
                         "or the model needs a newer llama.cpp.",
                         "该文件使用了 llama.cpp 不认识的预分词器（“{pre}”）；名称可能已损坏，或需要更新的 llama.cpp。",
                         f"tokenizer.ggml.pre={pre[:40]!r}", pre=pre[:40])
            stop.next_step = T("Download the file again, or try a newer llama.cpp / llama-server.",
                               "请重新下载该文件，或尝试更新的 llama.cpp / llama-server。")
            raise stop
    elif model == "t5":
        _charsmap(meta)
    for key in TOKENIZER_BOOL_KEYS[:2]:
        meta.get(key, "bool")
    if meta.find("tokenizer.ggml.tokens") is None:
        raise _list_problem("tokenizer.ggml.tokens", meta.arch, "This file is damaged: its {what} is missing.",
                            "文件已损坏：缺少{what_zh}。", "missing key tokenizer.ggml.tokens")
    _require_list(meta, "tokenizer.ggml.tokens", (STRING,))
    n_tokens = (meta.length("tokenizer.ggml.tokens") or 0) & 0xFFFFFFFF
    if meta.find("tokenizer.ggml.scores") is not None:
        _require_list(meta, "tokenizer.ggml.scores", (I32, F32))
        _at_least_as_long(meta, "tokenizer.ggml.scores", n_tokens)
    has_types = meta.find("tokenizer.ggml.token_type") is not None
    if has_types:
        _require_list(meta, "tokenizer.ggml.token_type", (I32,))
        _at_least_as_long(meta, "tokenizer.ggml.token_type", n_tokens)
    check_bytes = has_types and model not in ("rwkv", "test", "plamo2")
    texts = scan_tokens(meta, n_tokens, model, check_bytes)
    for key in TOKEN_ID_KEYS:
        meta.get(key, "u32")
    for key in TOKENIZER_BOOL_KEYS[2:]:
        meta.get(key, "bool")
    if meta.find("tokenizer.ggml.suppress_tokens") is not None:
        _require_list(meta, "tokenizer.ggml.suppress_tokens", (I32,))
    _named_tokens(meta, texts)
    return n_tokens


def _named_tokens(meta: Meta, texts: set[bytes] | None) -> None:
    """llama.cpp looks some tokens up by text for some model names and stops when one is missing."""
    if texts is None:
        return
    name = (meta.value("general.name") or "") if meta.type_of("general.name") == STRING else ""
    pre = (meta.value("tokenizer.ggml.pre") or "") if meta.type_of("tokenizer.ggml.pre") == STRING else ""
    arch = meta.arch or ""
    if any(s in pre for s in ("jina-v2-de", "jina-v2-es", "jina-v2-code", "mmbert")) or \
            any(s in arch for s in ("nomic-bert-moe", "jina-bert-v3")):
        return
    lowered = name.split("\0", 1)[0].lower()
    if "phi-3" in lowered or "phi3" in lowered:
        missing = [t.decode() for t in _PHI3_TOKENS if t not in texts]
        if missing:
            raise _stop("This file's name marks it as a Phi-3 model, but its vocabulary lacks the token '{token}' that "
                        "llama.cpp looks up for Phi-3.",
                        "该文件的名称表明它是 Phi-3 模型，但词表缺少 llama.cpp 为 Phi-3 查找的词元“{token}”。",
                        f"general.name={name[:60]!r}; missing token {missing[0]!r}", token=missing[0])


__all__ = ["check_vocab", "scan_tokens", "wrong_type"]
