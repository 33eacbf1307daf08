"""Where a model's layers and experts go, in plain words ("all 48 layers on the GPU, experts of 20 layers on the
processor"). Light on purpose: the window imports it at start-up."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.text import T, Text


@dataclass(frozen=True)
class Placement:
    """A candidate for a model with experts: ``gpu_layers`` as llama.cpp counts them (n_layer + 1 = every layer and
    the output layer) and the leading layers whose experts stay in RAM."""

    n_layer: int
    gpu_layers: int
    n_cpu_moe: int = 0

    @property
    def all_on_gpu(self) -> bool:
        return self.gpu_layers > self.n_layer

    def describe(self) -> Text:
        """In plain words: "all 48 layers on the GPU, experts of 20 layers on the processor"."""
        layers = min(self.gpu_layers, self.n_layer)
        experts = min(self.n_cpu_moe, self.n_layer)
        if self.all_on_gpu:
            where = T("all {n} layers on the GPU", "全部 {n} 层放在 GPU 上", n=self.n_layer)
        else:
            where = T("{k} of {n} layers on the GPU", "{n} 层中的 {k} 层放在 GPU 上", k=layers, n=self.n_layer)
        if experts <= 0:
            return where
        if experts >= self.n_layer:
            return T("{where}, the experts of every layer on the processor", "{where_zh}，所有层的专家放在处理器上",
                     where=where.render("en"), where_zh=where.render("zh"))
        return T("{where}, experts of {k} layers on the processor", "{where_zh}，{k} 层的专家放在处理器上",
                 where=where.render("en"), where_zh=where.render("zh"), k=experts)
