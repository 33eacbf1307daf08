"""llama.cpp's own answer to "what fits": ``llama-fit-params`` (the dry run behind llama-server's ``--fit``), asked once
per probe where the llama-server build ships it, as one more seed and as a number to show beside the measured one.

The app launches with ``--fit off`` (backends.py): a fit that moves settings behind the user's back makes a launch
irreproducible, and it is known to run out of memory on the first long message (llama.cpp #18354). Its dry run is
still a good guess; the probe proves or refutes it with real loads. ``llama-fit-params`` prints the fitted arguments
on one stdout line, e.g. ``-c 4096 -ngl 33`` or, for a model with experts, with ``-ot 'blk\\.(0|1)\\.ffn_…=CPU'``
overrides (it emits tensor overrides, not ``--n-cpu-moe``). A budget smaller than the card (a simulated 8 GB card)
becomes its ``--fit-target``: the memory to leave free on each device.
"""

from __future__ import annotations

import logging
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

TOOL_NAME = "llama-fit-params"
TIMEOUT_S = 120.0  # a dry run reads only the file's metadata, but has been seen to take minutes (llama.cpp #19912)
MiB = 1024**2
_EXPERT_NAMES = ("ffn_up_exps", "ffn_down_exps", "ffn_gate_exps", "ffn_gate_up_exps")


@dataclass(frozen=True)
class FitAnswer:
    """What the dry run chose: GPU layers (-1: all), context, and the layers whose experts it kept in RAM."""

    gpu_layers: int | None
    ctx: int | None
    experts_in_ram: tuple[int, ...] = ()
    line: str = ""

    def n_cpu_moe(self) -> int:
        """As ``--n-cpu-moe``: the count of layers whose experts stay in RAM (llama.cpp's fit moves leading ones)."""
        return len(self.experts_in_ram)


def fit_tool(server_bin: str | None) -> Path | None:
    """The dry-run tool next to a llama-server, when that build has it."""
    if not server_bin:
        return None
    tool = Path(server_bin).with_name(TOOL_NAME + Path(server_bin).suffix)
    return tool if tool.is_file() else None


def _experts_matched(pattern: str, n_layer: int) -> tuple[int, ...]:
    try:
        regex = re.compile(pattern)
    except re.error:
        logger.info("llama-fit-params printed an override that is no regex: %r", pattern)
        return ()
    return tuple(il for il in range(n_layer)
                 if any(regex.search(f"blk.{il}.{name}.weight") for name in _EXPERT_NAMES))


def parse_fit_line(line: str, n_layer: int) -> FitAnswer | None:
    """The fitted arguments of one stdout line; None when it holds none."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    values: dict[str, Any] = {"ctx": None, "gpu_layers": None}
    in_ram: set[int] = set()
    for flag, value in zip(words, words[1:] + [""], strict=True):
        if flag in ("-c", "--ctx-size") and value.lstrip("-").isdigit():
            values["ctx"] = int(value)
        elif flag in ("-ngl", "--gpu-layers", "--n-gpu-layers") and value.lstrip("-").isdigit():
            values["gpu_layers"] = int(value)
        elif flag in ("-ot", "--override-tensor"):
            for override in value.split(","):
                pattern, _, device = override.rpartition("=")
                if device.upper().startswith("CPU"):
                    in_ram.update(_experts_matched(pattern, n_layer))
    if values["gpu_layers"] is None and values["ctx"] is None:
        return None
    return FitAnswer(values["gpu_layers"], values["ctx"], tuple(sorted(in_ram)), line.strip())


def fit_targets_mib(hw: Any, margins: Any, vram_budget: int | None) -> list[int]:
    """Memory to leave free per GPU: the probe's margin, plus what a smaller budget keeps out of reach."""
    targets = []
    for gpu in getattr(hw, "gpus", None) or ():
        total, free = int(gpu.vram_total_bytes or 0), int(gpu.vram_free_bytes or 0)
        keep = margins.vram_keep(vram_budget or total)
        beyond_budget = max(free - vram_budget, 0) if vram_budget else 0
        targets.append(max((keep + beyond_budget) // MiB, 0))
    return targets


def ask_fit(info: Any, config: Any, server_bin: str | None, targets_mib: list[int]) -> FitAnswer | None:
    """Run the dry run for ``config``'s context and slots; None where the tool is missing, slow or says nothing."""
    tool = fit_tool(server_bin)
    if tool is None:
        return None
    argv = [str(tool), "-m", str(config.model), "-c", str(config.ctx), "-np", str(config.parallel),
            "-ctk", config.cache_type_k, "-ctv", config.cache_type_v]
    if targets_mib:
        argv += ["-fitt", ",".join(str(t) for t in targets_mib)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        logger.info("llama-fit-params did not answer: %s", exc)
        return None
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        logger.info("llama-fit-params exited %s: %s", done.returncode, (done.stderr or "").strip()[-300:])
        return None
    return parse_fit_line(lines[-1], int(info.block_count))
