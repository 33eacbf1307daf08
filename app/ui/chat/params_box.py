"""System prompt and sampling parameters, edited as a core ``ChatParams`` value."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QLabel, QPlainTextEdit, QSpinBox, QWidget

from app.core.chat.params import ChatParams
from app.ui.widgets.wheel_guard import guard_wheel


def _double(minimum: float, maximum: float, step: float, decimals: int = 2) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(minimum, maximum)
    box.setSingleStep(step)
    box.setDecimals(decimals)
    return box


class ParamsBox(QWidget):
    """``params()`` -> ChatParams; ``set_params(ChatParams)``. Max tokens 0 = automatic; seed -1 = random."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.system_prompt = QPlainTextEdit(self)
        self.system_prompt.setMaximumHeight(70)
        self.temperature = _double(0.0, 2.0, 0.1)
        self.top_p = _double(0.0, 1.0, 0.05)
        self.repeat_penalty = _double(0.5, 2.0, 0.05)
        self.max_tokens = QSpinBox(self)
        self.max_tokens.setRange(0, 131_072)
        self.max_tokens.setSingleStep(64)
        self.seed = QSpinBox(self)
        self.seed.setRange(-1, 2_147_483_647)
        guard_wheel(self.temperature, self.top_p, self.repeat_penalty, self.max_tokens, self.seed)
        self.labels = [QLabel(self, textFormat=Qt.TextFormat.PlainText) for _ in range(6)]
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        for label, field in zip(self.labels, (self.system_prompt, self.temperature, self.top_p, self.max_tokens,
                                               self.repeat_penalty, self.seed), strict=True):
            form.addRow(label, field)
        self.set_params(ChatParams())
        self.retranslate()

    def retranslate(self) -> None:
        texts = (self.tr("System prompt:"), self.tr("Temperature:"), self.tr("Top P:"),
                 self.tr("Max answer tokens:"), self.tr("Repeat penalty:"), self.tr("Seed:"))
        for label, text in zip(self.labels, texts, strict=True):
            label.setText(text)
        self.system_prompt.setPlaceholderText(self.tr("Optional: how the assistant should behave"))
        self.temperature.setToolTip(self.tr("Higher is more varied, lower is more focused"))
        self.max_tokens.setSpecialValueText(self.tr("Automatic"))
        self.max_tokens.setToolTip(self.tr("Automatic: 512, or a quarter of the context if that is smaller"))
        self.seed.setSpecialValueText(self.tr("Random"))

    def params(self) -> ChatParams:
        return ChatParams(
            temperature=round(self.temperature.value(), 3),
            top_p=round(self.top_p.value(), 3),
            max_tokens=self.max_tokens.value() or None,
            repeat_penalty=round(self.repeat_penalty.value(), 3),
            system_prompt=self.system_prompt.toPlainText().strip(),
            seed=None if self.seed.value() < 0 else self.seed.value(),
            extra=dict(self._extra),
        )

    def set_params(self, params: ChatParams) -> None:
        self._extra = dict(params.extra)  # request fields this form does not show
        self.system_prompt.setPlainText(params.system_prompt)
        self.temperature.setValue(params.temperature)
        self.top_p.setValue(params.top_p)
        self.max_tokens.setValue(params.max_tokens or 0)
        self.repeat_penalty.setValue(params.repeat_penalty)
        self.seed.setValue(-1 if params.seed is None else params.seed)
