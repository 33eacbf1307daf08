"""Everything known about one server death, gathered once and handed to the per-cause sentence builders."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.diagnosis.log_facts import LogFacts
from app.core.diagnosis.memory_evidence import KillEvidence
from app.core.diagnosis.oom_evidence import OomEvidence
from app.core.diagnosis.rss_trend import RssTrend
from app.core.diagnosis.signatures import SignatureHit
from app.core.process.exit_status import ExitStatus
from app.core.text import Text, human_bytes


@dataclass(frozen=True)
class EngineFacts:
    """What the caller knows about this computer's engines, gathered before the diagnosis runs (the classifier
    imports no engine module and runs no probe; app/core/server/crash.py gathers them for an illegal instruction).
    ``faulting``/``missing``: for each ggml system_info flag of an extension this processor cannot run, the
    extension's name: advertised here but faulting when run / not even advertised here."""

    builtin_built_here: bool = False  # the set-up built the built-in engine on this computer (its build record)
    faulting: Mapping[str, str] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    program: str | None = None  # the server program that ran (its argv[0]), when the settings do not name it


@dataclass(frozen=True)
class Situation:
    status: ExitStatus
    config: Any
    facts: LogFacts
    hit: SignatureHit | None
    block_count: int | None
    oom: OomEvidence | None
    trend: RssTrend | None
    was_ready: bool | None
    plan: Any = None  # app.core.plan.memory.MemoryPlan for the failed config, when the caller has one
    kill: KillEvidence | None = None  # for a SIGKILL: whether memory was short, and the readings that show it
    engine: EngineFacts = EngineFacts()  # for an illegal instruction: the engine build and the processor's answer

    def group(self, name: str) -> str | None:
        """A named group of the matched signature, if it has one."""
        if self.hit is None or name not in self.hit.match.re.groupindex:
            return None
        value = self.hit.match.group(name)
        return value.strip() if value else None

    @property
    def model_name(self) -> str:
        model = getattr(self.config, "model", None)
        return Path(str(model)).name if model else "?"

    @property
    def model_path(self) -> str:
        return str(getattr(self.config, "model", "") or "")

    @property
    def backend(self) -> str | None:
        return getattr(self.config, "backend", None)

    @property
    def peak_rss_bytes(self) -> int | None:
        """The highest of the sampled peak and what the kernel reported when it killed the server (it reads the
        moment of the kill, which half-second samples can miss)."""
        known = [value for value in (self.trend.peak_bytes if self.trend else None,
                                     self.oom.killed_rss_bytes if self.oom else None) if value]
        return max(known) if known else None

    @property
    def peak_rss_text(self) -> str | None:
        peak = self.peak_rss_bytes
        return human_bytes(peak) if peak else None


def prefixed(en_prefix: str, zh_prefix: str, text: Text) -> Text:
    """A Text with a prefix in each language; the inner Text is rendered per language, not in the current one."""
    english = text.render("en")
    if en_prefix.endswith((", ", ": ")) and english[:1].isupper() and english[1:2].islower():
        english = english[0].lower() + english[1:]  # "..., lower the context" rather than "..., Lower the context"
    return Text(en_prefix + english, zh_prefix + text.render("zh"))
