"""Tokenizer vocabularies for generated models, in the two shapes real GGUF files carry.

- SentencePiece (``tokenizer.ggml.model = "llama"``: llama, gemma, phi-3): special tokens, the 256 byte-fallback
  tokens ``<0x00>`` … ``<0xFF>`` (llama.cpp finds the newline token among them), then word pieces with scores.
- Byte-level BPE (``"gpt2"``: qwen2, qwen3): every byte as its GPT-2 printable character, ranked merges (llama.cpp
  refuses a BPE vocabulary without ``tokenizer.ggml.merges``), the merged tokens, then the special tokens, with a
  pre-tokenizer name llama.cpp knows (``tokenizer.ggml.pre``, e.g. ``qwen2``).

The pieces and merges are learnt from a few built-in sentences by a tiny BPE trainer, so both tokenizers really
merge common English (``Paris``, ``the``) instead of spelling every prompt byte by byte.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

# gguf token types (llama.cpp's llama_token_type)
NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6
SPM_SPACE = "\u2581"  # SentencePiece's "▁" word boundary

_CORPUS = (
    "What is the capital of France? The capital of France is Paris. Hello! Please tell me a long story. "
    "Once upon a time there was a little model that wrote the same words again and again. "
    "You are a helpful assistant. Answer the question in one sentence, and then stop. "
    "The quick brown fox jumps over the lazy dog. Thank you, that is all for today."
)
_WORDS = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+")


@dataclass(frozen=True)
class Vocab:
    model: str  # tokenizer.ggml.model
    tokens: list[str]
    types: list[int]
    special: dict[str, int]  # "bos" / "eos" / "eot" / "unk" / "pad" -> token id
    scores: list[float] | None = None  # SentencePiece only
    merges: list[str] = field(default_factory=list)  # BPE only: "left right", best rank first
    pre: str | None = None  # BPE pre-tokenizer name
    add_bos: bool = True
    add_space_prefix: bool | None = None  # SentencePiece: prepend "▁" to the text (llama: yes, gemma: no)

    def id(self, token: str) -> int:
        return self.tokens.index(token)

    def __len__(self) -> int:
        return len(self.tokens)

    def partial_utf8_ids(self) -> list[int]:
        """Tokens that are a byte 0x80-0xFF alone: never valid UTF-8 by themselves."""
        if self.model == "gpt2":
            high = set(gpt2_byte_chars()[0x80:])
            return [i for i, t in enumerate(self.tokens) if t in high]
        return [i for i, t in enumerate(self.tokens) if self.types[i] == BYTE and int(t[3:5], 16) >= 0x80]


def _train(words: list[list[str]], n_merges: int) -> list[tuple[str, str]]:
    """Greedy BPE over ``words`` (each a list of symbols): the most frequent adjacent pair, ``n_merges`` times."""
    merges: list[tuple[str, str]] = []
    counts = Counter(tuple(w) for w in words)
    for _ in range(n_merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for word, n in counts.items():
            for pair in pairwise(word):
                pairs[pair] += n
        if not pairs:
            break
        best = max(pairs.items(), key=lambda item: (item[1], item[0]))[0]  # ties broken by text: deterministic
        merges.append(best)
        merged: Counter[tuple[str, ...]] = Counter()
        for word, n in counts.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += n
        counts = merged
    return merges


def gpt2_byte_chars() -> list[str]:
    """GPT-2's printable stand-in for each byte value 0..255 (space is "Ġ", newline "Ċ")."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def spm_vocab(leading: list[tuple[str, int]], trailing: Sequence[tuple[str, int]] = (), *, special: dict[str, str],
              n_merges: int = 160, add_bos: bool = True, add_space_prefix: bool = True) -> Vocab:
    """A SentencePiece vocabulary: ``leading`` (token, type) pairs, 256 byte tokens, learnt pieces, ``trailing``.

    ``special`` names the role of special tokens by text, e.g. ``{"bos": "<s>", "eos": "</s>", "unk": "<unk>"}``.
    """
    tokens = [t for t, _ in leading] + [f"<0x{b:02X}>" for b in range(256)]
    types = [k for _, k in leading] + [BYTE] * 256
    scores = [0.0] * len(tokens)
    text = _CORPUS.replace(" ", SPM_SPACE)
    words = [list(SPM_SPACE + w.lstrip(SPM_SPACE)) for w in re.findall(rf"{SPM_SPACE}?[^{SPM_SPACE}]+", text)]
    pieces = sorted({s for w in words for s in w})  # every character of the corpus is a piece
    pieces += [a + b for a, b in _train(words, n_merges)]
    for rank, piece in enumerate(dict.fromkeys(pieces)):
        if piece not in tokens:
            tokens.append(piece)
            types.append(NORMAL)
            scores.append(-float(rank))
    for token, kind in trailing:
        tokens.append(token)
        types.append(kind)
        scores.append(0.0)
    return Vocab("llama", tokens, types, {role: tokens.index(t) for role, t in special.items()}, scores=scores,
                 add_bos=add_bos, add_space_prefix=add_space_prefix)


def bpe_vocab(specials: list[str], *, special: dict[str, str], pre: str = "qwen2", n_merges: int = 240,
              add_bos: bool = False) -> Vocab:
    """A byte-level BPE vocabulary: 256 byte characters, learnt merges and their tokens, then ``specials``."""
    chars = gpt2_byte_chars()
    tokens = list(chars)
    words = [[chars[b] for b in w.encode("utf-8")] for w in _WORDS.findall(_CORPUS)]
    merges = _train(words, n_merges)
    for a, b in merges:
        if a + b not in tokens:
            tokens.append(a + b)
    types = [NORMAL] * len(tokens)
    tokens += specials
    types += [CONTROL] * len(specials)
    return Vocab("gpt2", tokens, types, {role: tokens.index(t) for role, t in special.items()},
                 merges=[f"{a} {b}" for a, b in merges], pre=pre, add_bos=add_bos)
