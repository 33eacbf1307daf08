"""`gguf-launcher plan MODEL`: estimate memory per device and the most GPU layers / context that fit.

An estimate only (the `probe` command proves it with real loads). ``--vram-budget 8G`` plans for a GPU
of that size even on a machine without one. Exit 0 when the requested settings fit, 1 when not or on
an error, 2 for usage errors.
"""

from __future__ import annotations

import argparse

from app.cli._engine import add_backend_argument, chosen_backend
from app.cli._model import read_model
from app.cli._output import print_json, report_user_error
from app.cli._types import (
    context_size,
    gpu_layers,
    non_negative_int,
    parse_bytes,
    positive_int,
    rpc_workers,
    tensor_split,
)
from app.core.gguf.projector import find_projector
from app.core.launch.backends import split_number
from app.core.launch.config import SPLIT_MODES, LaunchConfig
from app.core.plan.kv import CACHE_TYPE_BYTES
from app.core.problem import UserError
from app.core.session import first_run_ctx
from app.core.text import T, human_bytes


def add_config_arguments(parser: argparse.ArgumentParser, *, gpu_layers_default: int | None) -> None:
    """Options shared by `plan` and `probe`."""
    parser.add_argument("model", help="path of a .gguf file")
    parser.add_argument("--ctx", type=context_size, help="context length in tokens (default: see below)")
    if gpu_layers_default is not None:
        parser.add_argument("--gpu-layers", type=gpu_layers, default=gpu_layers_default,
                            help="layers to put on the GPU, -1 = all (default: %(default)s)")
    parser.add_argument("--parallel", type=positive_int, default=1, help="parallel request slots (default: 1)")
    parser.add_argument("--ubatch", type=positive_int, default=512, help="micro-batch size (default: 512)")
    parser.add_argument("--cache-type-k", choices=sorted(CACHE_TYPE_BYTES), default="f16")
    parser.add_argument("--cache-type-v", choices=sorted(CACHE_TYPE_BYTES), default="f16")
    parser.add_argument("--flash-attn", choices=["on", "off"], help="flash attention (default: the engine's)")
    parser.add_argument("--n-cpu-moe", type=non_negative_int, default=0, metavar="N",
                        help="mixture-of-experts models: keep the experts of the first N layers in RAM "
                             "(llama-server; default: 0)")
    add_gpu_split_arguments(parser)
    add_backend_argument(parser)
    parser.add_argument("--server-bin", metavar="PATH", help="llama-server to use (with --backend llama-server)")
    parser.add_argument("--vram-budget", type=parse_bytes, metavar="BYTES",
                        help="plan for one GPU with this much free memory (e.g. 8G), even without a GPU")
    parser.add_argument("--ram-budget", type=parse_bytes, metavar="BYTES",
                        help="RAM to plan for instead of what is free")
    parser.add_argument("--keep-ram", type=parse_bytes, metavar="BYTES", default=512 * 1024**2,
                        help="RAM to leave free at least (default 512M; 5%% of the RAM if more)")
    parser.add_argument("--keep-vram", type=parse_bytes, metavar="BYTES", default=512 * 1024**2,
                        help="VRAM to leave free at least (default 512M; 5%% of the card if more)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def add_gpu_split_arguments(parser: argparse.ArgumentParser) -> None:
    """Several GPUs (shared by `plan`, `probe` and `serve`); GPUs numbered as the Machine step shows them."""
    parser.add_argument("--tensor-split", type=tensor_split, default=(), metavar="A,B,...",
                        help="each GPU's share of the layers, e.g. 3,1 (default: in proportion to free memory)")
    parser.add_argument("--split-mode", choices=list(SPLIT_MODES), default="layer",
                        help="several GPUs: whole layers per GPU, rows of every matrix, or one GPU only "
                             "(default: %(default)s)")
    parser.add_argument("--main-gpu", type=non_negative_int, default=0, metavar="N",
                        help="the GPU for --split-mode none (and intermediate results with row) (default: 0)")
    parser.add_argument("--rpc", type=rpc_workers, default=(), metavar="HOST:PORT[,...]",
                        help="llama.cpp workers (rpc-server on other computers) that take a share of the layers "
                             "like GPUs, listed before them in --tensor-split (llama-server built with RPC)")


def split_from_args(args) -> dict:
    """The LaunchConfig fields of add_gpu_split_arguments."""
    return {"tensor_split": tuple(args.tensor_split), "split_mode": args.split_mode, "main_gpu": args.main_gpu,
            "rpc_workers": tuple(getattr(args, "rpc", ()) or ())}


def worker_checks(config: LaunchConfig) -> list:
    """Each worker of ``config`` as the plan saw it (its last check, app.core.rpc.check)."""
    from app.core.rpc.check import last_check
    from app.core.rpc.worker import parse_workers

    return [last_check(worker) for worker in parse_workers(config.rpc_workers)]


def margins_from_args(args):
    from app.core.plan.budget import Margins

    return Margins(vram_min_bytes=args.keep_vram, ram_min_bytes=args.keep_ram)


def default_ctx(info, hw, vram_budget: int | None) -> int:
    """Core's first-run context; with no GPU to plan for, context is the knob, so the whole training length."""
    has_gpu = (hw is not None and bool(hw.gpus)) or vram_budget is not None
    return first_run_ctx(info, context_is_searched=not has_gpu)


def config_from_args(args, info, hw) -> LaunchConfig:
    ctx = args.ctx or default_ctx(info, hw, args.vram_budget)
    flash = None if args.flash_attn is None else args.flash_attn == "on"
    projector = find_projector(args.model)
    return LaunchConfig(model=args.model, backend=chosen_backend(args), server_bin=args.server_bin, ctx=ctx,
                        gpu_layers=getattr(args, "gpu_layers", 0), parallel=args.parallel,
                        batch=max(512, args.ubatch), ubatch=args.ubatch, flash_attn=flash,
                        cache_type_k=args.cache_type_k, cache_type_v=args.cache_type_v,
                        mmproj=str(projector) if projector is not None else None, n_cpu_moe=args.n_cpu_moe,
                        **split_from_args(args))


def add_parser(subparsers) -> argparse.ArgumentParser:
    description = (__doc__ or "") + "\nDefault --ctx: 4096 with a GPU, else the model's training length."
    parser = subparsers.add_parser("plan", help="estimate memory per device and the most layers/context that fit",
                                   description=description)
    add_config_arguments(parser, gpu_layers_default=-1)
    parser.add_argument("--llama-cpp", action="store_true",
                        help="also load the model once in llama-server and show llama.cpp's own memory numbers "
                             "beside the plan (needs --backend llama-server; takes as long as a load)")
    return parser


def _llama_cpp_side(args, plan, config):
    """(llama.cpp's report, the side-by-side) when asked for; (None, None) otherwise."""
    if not getattr(args, "llama_cpp", False):
        return None, None
    from app.core.probe.llama_numbers import compare, llama_cpp_report

    report = llama_cpp_report(config)
    if report is None:
        raise UserError(T("llama.cpp's own numbers come from the llama-server engine.",
                          "llama.cpp 自己的数字只能来自 llama-server 引擎。"),
                        T("Add --backend llama-server to compare them with the plan.",
                          "加上 --backend llama-server 即可与估算对比。"))
    return report, compare(plan, report)


def _experts(info, config, suggested) -> dict | None:
    """A mixture-of-experts model's expert bytes per layer, what --n-cpu-moe keeps in RAM, and the plan's suggested
    placement; None for others."""
    from app.core.plan.experts import expert_split

    split = expert_split(info)
    if not split.is_moe:
        return None
    return split.to_dict() | {"n_cpu_moe": config.n_cpu_moe, "kept_in_ram_bytes": split.moved_to_cpu(config.n_cpu_moe),
                              "suggested": None if suggested is None else {
                                  "gpu_layers": suggested.gpu_layers, "n_cpu_moe": suggested.n_cpu_moe}}


def _suggest_experts(args, info, config, hw, margins):
    from app.core.plan.moe_placement import suggested_placement

    return suggested_placement(info, config, hw, vram_budget=args.vram_budget, ram_budget=args.ram_budget,
                               margins=margins)


def _print_experts(suggested) -> None:
    if suggested is None:
        return
    print(T("For this model with experts the plan suggests: {where} (--gpu-layers {ngl} --n-cpu-moe {k}); "
            "gguf-launcher probe proves it with real loads.",
            "对这个含专家的模型，估算建议：{where_zh}（--gpu-layers {ngl} --n-cpu-moe {k}）；"
            "gguf-launcher probe 会用真实加载来验证。",
            where=suggested.describe().render("en"), where_zh=suggested.describe().render("zh"),
            ngl=suggested.gpu_layers, k=suggested.n_cpu_moe))


def _print_side_by_side(side) -> None:
    if side is None:
        print(T("llama.cpp printed no memory table for this load.", "llama.cpp 没有为这次加载打印内存表。"))
        return
    print(T("llama.cpp's own numbers: model {m:.0f} + context {c:.0f} + compute {k:.0f} = {t:.0f} MiB; the plan "
            "{p:.0f} MiB ({d:+.1f} %).", "llama.cpp 自己的数字：模型 {m:.0f} + 上下文 {c:.0f} + 计算 {k:.0f} = "
            "{t:.0f} MiB；估算 {p:.0f} MiB（{d:+.1f}%）。", m=side.parts["model"][1], c=side.parts["context"][1],
            k=side.parts["compute"][1], t=side.llama_mib, p=side.plan_mib, d=100 * side.difference))


def _print_plan(plan, projector) -> None:
    print(f"{'device':<8} {'layers':>6} {'weights':>11} {'KV cache':>11} {'compute':>11} {'overhead':>11} "
          f"{'total':>11} {'free':>11}")
    for d in plan.devices:
        layers = f"{d.layers}{'+out' if d.output_layer else ''}"
        print(f"{d.budget.label:<8} {layers:>6} {human_bytes(d.weights_bytes):>11} {human_bytes(d.kv_bytes):>11} "
              f"{human_bytes(d.compute_bytes):>11} {human_bytes(d.overhead_bytes):>11} "
              f"{human_bytes(d.total_bytes):>11} {human_bytes(d.budget.free_bytes):>11}")
    print()
    for sentence in plan.summary():
        print(sentence)
    if plan.proposed_tensor_split:
        split = ",".join(map(split_number, plan.proposed_tensor_split))
        print(T("Proposed split for these GPUs: --tensor-split {split}",
                "为这些 GPU 建议的拆分：--tensor-split {split}", split=split))
    if projector is not None:
        print(projector.sentence())


def run(args) -> int:
    from app.core.hardware.scan import scan_hardware
    from app.core.plan.memory import make_plan
    from app.core.plan.projector import found_projector

    try:
        info = read_model(args.model)
        hw = scan_hardware()
        config = config_from_args(args, info, hw)
        plan = make_plan(info, config, hw, vram_budget=args.vram_budget,
                         ram_budget=args.ram_budget, margins=margins_from_args(args))
        report, side = _llama_cpp_side(args, plan, config)
        suggested = _suggest_experts(args, info, config, hw, margins_from_args(args))
    except UserError as error:
        return report_user_error(error, args.json)
    projector = found_projector(args.model, config.backend, config.flash_attn)
    if args.json:
        llama = None if report is None else {"side_by_side": side.to_dict() if side else None,
                                             "kv_mib": round(report.kv_mib, 2), "n_seq_max": report.n_seq_max}
        print_json(plan.to_dict() | {"projector": projector.to_dict() if projector is not None else None,
                                     "llama_cpp": llama, "experts": _experts(info, config, suggested),
                                     "workers": [c.to_dict() for c in worker_checks(config)]})
    else:
        for check in worker_checks(config):
            print(check.sentence())
        _print_plan(plan, projector)
        _print_experts(suggested)
        if report is not None:
            _print_side_by_side(side)
    return 0 if plan.fits else 1
