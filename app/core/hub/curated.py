"""A short list of small instruct models that answer well for their size, from under 1 GB to about 5 GB, so a 4 GB
laptop and an 8 GB graphics card each get a sensible first pick; and which one suits this computer.

The repository ids are well-known public GGUF repositories (bartowski's quantizations and Qwen's own). They were
NOT checked online when this list was written (the machine had no internet): a repository that has gone away shows
the Hub's "not found" sentence when the user picks it. The sizes are the Q4_K_M files' approximate sizes; the real
verdict comes from the repository's file list and each file's header once the user picks an entry.

Pure data and arithmetic: no Hub module is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.text import T, Text

GB = 1_000_000_000
OVERHEAD_BYTES = 1 << 30  # context, the engine's buffers: what a first run needs beyond the weights (about 1 GiB)
CPU_MAX_BYTES = 1_800_000_000  # on the processor alone, larger models answer too slowly for a first pick (2B at most)


@dataclass(frozen=True)
class CuratedModel:
    repo: str
    title: str  # the model's own name, the same in both languages
    params: str  # "1.5B"
    quant: str  # the quantization suggested first (a good size/quality balance)
    approx_bytes: int  # that file's size, roughly
    note: Text  # what it is good for, in a few words

    def needs_bytes(self) -> int:
        """Memory a first run needs, roughly: the weights plus context and buffers."""
        return self.approx_bytes + OVERHEAD_BYTES


CURATED: tuple[CuratedModel, ...] = (
    CuratedModel("bartowski/Qwen2.5-0.5B-Instruct-GGUF", "Qwen2.5 0.5B Instruct", "0.5B", "Q4_K_M",
                 int(0.40 * GB), T("Tiny and fast; simple questions, any computer.",
                                   "极小且快；简单问答，任何电脑都能运行。")),
    CuratedModel("bartowski/Llama-3.2-1B-Instruct-GGUF", "Llama 3.2 1B Instruct", "1B", "Q4_K_M", int(0.81 * GB),
                 T("Small and quick; short answers in English.", "小而快；适合简短的英文回答。")),
    CuratedModel("bartowski/Qwen2.5-1.5B-Instruct-GGUF", "Qwen2.5 1.5B Instruct", "1.5B", "Q4_K_M", int(0.99 * GB),
                 T("Good answers for its size, English and Chinese; laptops.",
                   "同等大小中回答较好，中英文皆可；适合笔记本电脑。")),
    CuratedModel("bartowski/gemma-2-2b-it-GGUF", "Gemma 2 2B Instruct", "2B", "Q4_K_M", int(1.71 * GB),
                 T("Fluent writing; a 4 GB graphics card.", "文笔流畅；适合 4 GB 显卡。")),
    CuratedModel("bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama 3.2 3B Instruct", "3B", "Q4_K_M", int(2.02 * GB),
                 T("A capable all-rounder for a 4 GB graphics card.", "能力全面，适合 4 GB 显卡。")),
    CuratedModel("bartowski/Qwen2.5-3B-Instruct-GGUF", "Qwen2.5 3B Instruct", "3B", "Q4_K_M", int(1.93 * GB),
                 T("Strong in Chinese and coding for its size; a 4 GB graphics card.",
                   "同等大小中中文和编程较强；适合 4 GB 显卡。")),
    CuratedModel("bartowski/Qwen2.5-7B-Instruct-GGUF", "Qwen2.5 7B Instruct", "7B", "Q4_K_M", int(4.68 * GB),
                 T("Much better answers; an 8 GB graphics card.", "回答质量明显更好；适合 8 GB 显卡。")),
    CuratedModel("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "Llama 3.1 8B Instruct", "8B", "Q4_K_M",
                 int(4.92 * GB), T("A widely used 8B model; an 8 GB graphics card.",
                                   "广泛使用的 8B 模型；适合 8 GB 显卡。")),
)


def suggested_for(vram_free: int | None, ram_available: int | None,
                  models: tuple[CuratedModel, ...] = CURATED) -> CuratedModel | None:
    """The largest entry whose first run fits on the graphics card's free memory; with no card that fits one, the
    largest that runs at a readable speed on the processor (at most about 1.8 GB) and fits in the free RAM. None when
    nothing does (the memory is unknown, or too small even for the smallest)."""
    on_card = [m for m in models if vram_free is not None and m.needs_bytes() <= vram_free]
    if on_card:
        return max(on_card, key=lambda m: m.approx_bytes)
    on_cpu = [m for m in models if ram_available is not None and m.approx_bytes <= CPU_MAX_BYTES
              and m.needs_bytes() <= ram_available]
    return max(on_cpu, key=lambda m: m.approx_bytes) if on_cpu else None


def suggested_for_hardware(hw) -> CuratedModel | None:
    """``suggested_for`` with a HardwareReport's largest free graphics memory and usable RAM."""
    free = [g.vram_free_bytes for g in getattr(hw, "gpus", []) if g.vram_free_bytes]
    return suggested_for(max(free) if free else None, hw.usable_ram_bytes())
