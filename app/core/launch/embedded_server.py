"""The built-in engine's server: llama-cpp-python's own, started with two settings its command line cannot pass.

``python -m llama_cpp.server`` creates every context with the sliding-window layers at the full context
(llama_context_default_params() has swa_full = true, and the server has no option for it) and with flash attention
off unless ``--flash_attn true`` (llama-cpp-python maps its boolean to enabled / disabled, never to llama.cpp's
"auto"). This entry point takes all of that server's options plus:

  --swa_full true|false      sliding-window layers at the full context (default false: the window, as llama-server)
  --flash_attn auto|true|false   (default auto, as llama-server: llama.cpp turns it on where the device running the
                             layer supports it; on the CPU it always does, llama-context.cpp resolve_fused_ops)

and sets them on the context parameters just before llama.cpp creates the context. Measured on SmolLM2-135M at
8192 tokens after a prompt of 80 % of the context: benchmarks/bench_engines.py.

Run from source as ``python -m app.core.launch.embedded_server ARGS``; a packaged app re-launches itself with
``--embedded-server ARGS`` (app/__main__.py), which lands in ``main`` too.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass

logger = logging.getLogger(__name__)

FLASH_ATTN_CHOICES = ("auto", "true", "false")


@dataclass(frozen=True)
class ContextChoices:
    swa_full: bool = False
    flash_attn: str = "auto"  # one of FLASH_ATTN_CHOICES


def split_args(argv: list[str]) -> tuple[ContextChoices, list[str]]:
    """This entry point's own options (the last of each wins) and the rest, for llama-cpp-python's server."""
    swa_full, flash_attn, rest = "false", "auto", []
    i = 0
    while i < len(argv):
        name, _, inline = argv[i].partition("=")
        if name in ("--swa_full", "--flash_attn"):
            value = inline if inline else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if inline else 2
            if name == "--swa_full":
                swa_full = value.lower()
            else:
                flash_attn = value.lower()
            continue
        rest.append(argv[i])
        i += 1
    if swa_full not in ("true", "false") or flash_attn not in FLASH_ATTN_CHOICES:
        raise ValueError(f"--swa_full takes true or false, --flash_attn one of {', '.join(FLASH_ATTN_CHOICES)}")
    return ContextChoices(swa_full == "true", flash_attn), rest


def flash_attn_type(choice: str) -> int:
    import llama_cpp

    return {"auto": llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO, "true": llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED,
            "false": llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED}[choice]


def install(choices: ContextChoices) -> None:
    """Make every llama.cpp context this process creates use ``choices``. Llama.__init__ fills its context
    parameters from the server's settings and hands them to ``_internals.LlamaContext``, looked up at call time:
    a subclass there is the one place where both settings reach llama.cpp."""
    from llama_cpp import _internals

    class ChosenContext(_internals.LlamaContext):
        def __init__(self, *, model, params, verbose: bool = True):
            params.swa_full = choices.swa_full
            params.flash_attn_type = flash_attn_type(choices.flash_attn)
            super().__init__(model=model, params=params, verbose=verbose)

    _internals.LlamaContext = ChosenContext


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        choices, rest = split_args(argv)
    except ValueError as error:
        sys.stderr.write(f"{error}\n")
        return 2
    install(choices)
    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["llama_cpp.server", *rest]
    serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
