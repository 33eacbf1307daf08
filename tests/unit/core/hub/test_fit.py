"""Fit verdicts from the app's plan: on the card, partly, the processor only, not at all, and the best fit."""

from __future__ import annotations

from app.core.gguf.reader import read_model_info
from app.core.hardware.scan import scan_hardware
from app.core.hub.fit import USEFUL_CTX, FileFit, FitVerdict, first_run_config, judge, mark_best
from app.core.plan.memory import make_plan
from app.core.problem import UserError
from app.core.text import T

MiB = 1 << 20


def _judge(model, **budgets):
    return judge(read_model_info(model), scan_hardware(), "llama-server", name=model.name, size=1, **budgets)


def test_each_verdict_follows_the_plan(make_model):
    model = make_model("m.gguf", n_layers=6, n_embd=128, n_head=4, n_head_kv=4, n_ff=256)
    all_on_card = _judge(model, vram_budget=8 << 30)
    assert all_on_card.verdict is FitVerdict.FITS_GPU and all_on_card.gpu_layers == all_on_card.total_layers == 7
    assert all_on_card.ctx == 4096 and all_on_card.devices[0].label == "GPU 0"
    assert "Fits on the graphics card: all 7 layers, 4096 tokens of context" in str(all_on_card.sentence())
    # a budget between "nothing on the card" and "everything", found by bisection (layers grow with the budget)
    low, high, partial = 1 * MiB, 8 << 30, None
    while partial is None and high - low > MiB:
        middle = (low + high) // 2
        fit = _judge(model, vram_budget=middle)
        if fit.verdict is FitVerdict.PARTIAL_GPU:
            partial = fit
            info = read_model_info(model)
            plan = make_plan(info, first_run_config(info, "llama-server"), scan_hardware(), vram_budget=middle)
            assert fit.gpu_layers == plan.max_gpu_layers and 0 < fit.gpu_layers < fit.total_layers
        elif fit.verdict is FitVerdict.FITS_GPU:
            high = middle
        else:
            low = middle
    assert partial is not None, "no budget gave a partial offload"
    assert f"Fits with {partial.gpu_layers} of 7 layers on the graphics card" in str(partial.sentence())
    cpu = _judge(model, vram_budget=1 * MiB)  # a card too small for the engine's own buffers: the processor only
    assert cpu.verdict is FitVerdict.CPU_ONLY and cpu.gpu_layers == 0 and [d.label for d in cpu.devices] == ["RAM"]
    nothing = _judge(model, vram_budget=1 * MiB, ram_budget=1 * MiB)
    assert nothing.verdict is FitVerdict.DOES_NOT_FIT and nothing.ctx is None
    assert nothing.sentence().render("zh").startswith("这台电脑的内存放不下")


def _fit(name: str, size: int, verdict: FitVerdict, ctx: int | None = 4096) -> FileFit:
    return FileFit(name, size, verdict, ctx=ctx, trained_ctx=8192)


def test_best_fit_is_the_largest_that_fits_on_the_card_with_a_useful_context():
    fits = [_fit("Q8_0", 8, FitVerdict.PARTIAL_GPU), _fit("Q6_K", 6, FitVerdict.FITS_GPU, ctx=USEFUL_CTX - 256),
            _fit("Q4_K_M", 5, FitVerdict.FITS_GPU), _fit("Q3_K_S", 3, FitVerdict.FITS_GPU),
            _fit("F16", 16, FitVerdict.DOES_NOT_FIT, ctx=None)]
    assert [f.name for f in mark_best(fits) if f.best] == ["Q4_K_M"]


def test_best_fit_on_the_processor_and_none_when_nothing_fits():
    cpu = [_fit("Q4_K_M", 5, FitVerdict.CPU_ONLY), _fit("Q8_0", 8, FitVerdict.CPU_ONLY)]
    assert [f.name for f in mark_best(cpu) if f.best] == ["Q8_0"]
    failed = FileFit("x", 1, FitVerdict.UNKNOWN, problem=UserError(T("no", "不")))
    assert not any(f.best for f in mark_best([_fit("F16", 16, FitVerdict.DOES_NOT_FIT, ctx=None), failed]))
