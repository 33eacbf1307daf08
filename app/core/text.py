"""Bilingual user-facing sentences.

Core never imports Qt, so its sentences cannot go through ``QObject.tr``. Instead every
user-visible sentence is a :class:`Text` carrying English and Simplified Chinese templates
side by side; the CLI and the GUI both render it in the current language.
"""

from __future__ import annotations

import locale
import os
from dataclasses import dataclass, field
from typing import Any

from app.core.text_safety import inert

SUPPORTED_LANGUAGES = ("en", "zh")
_language: str | None = None


def detect_system_language() -> str:
    """'zh' when the environment or OS locale is Chinese, else 'en'."""
    for var in ("GGUF_LAUNCHER_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"


def current_language() -> str:
    global _language
    if _language is None:
        _language = detect_system_language()
    return _language


def set_language(lang: str) -> None:
    global _language
    if lang not in SUPPORTED_LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; choose one of {SUPPORTED_LANGUAGES}")
    _language = lang


@dataclass(frozen=True)
class Text:
    """A sentence in English and Chinese with ``{name}`` placeholders filled from params.

    A string param is a value inside a sentence (a model's name, a file name, a server's answer): it is made inert
    and kept on the sentence's line, so a hostile one cannot steer the terminal or print a line of its own."""

    en: str
    zh: str
    params: dict[str, Any] = field(default_factory=dict, compare=False)

    def render(self, lang: str | None = None) -> str:
        template = self.zh if (lang or current_language()) == "zh" else self.en
        if not self.params:
            return template
        try:
            return template.format(**{name: inert(value) if isinstance(value, str) else value
                                      for name, value in self.params.items()})
        except (KeyError, IndexError, ValueError):
            return template

    def __str__(self) -> str:
        return self.render()

    def to_dict(self) -> dict[str, str]:
        return {"en": self.render("en"), "zh": self.render("zh")}


def T(en: str, zh: str, **params: Any) -> Text:
    """Shorthand used throughout core: ``T("Port {port} is busy", "端口 {port} 被占用", port=8080)``."""
    return Text(en, zh, params)


def human_bytes(n: int | float | None) -> str:
    """1536 -> '1.5 KiB'; None -> 'unknown'."""
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
