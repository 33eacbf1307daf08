"""The settings as a command reads them: a file that had to be set aside (damaged, not a regular file, too big or too
deeply nested) is said once on stderr, in one sentence, so stdout stays the command's own output (JSON included)."""

from __future__ import annotations

import sys

from app.core.settings import Settings, load_settings
from app.core.text import T


def load_settings_saying_why() -> Settings:
    settings = load_settings()
    if settings.notice is not None:
        sys.stderr.write(f"{T('note', '注意')}: {settings.notice}\n")
    return settings
