"""The Recent list as the Model step shows it: each file by its name, told apart by its folder when two share a name,
and what became of it since it was opened (gone, or damaged: its header's cheap checks fail).

``recent_labels`` is pure (the GUI thread calls it at once); ``check_recent`` reads each file's header and runs on a
worker. A missing file is left out of the menu by the caller (nothing to open; it stays in the settings, so a file on
a drive that comes back is listed again); a damaged one stays, marked, because opening it shows what is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from app.core.library.scan import LocalModel, inspect
from app.core.problem import Status
from app.core.text import Text

OK, MISSING, DAMAGED = "ok", "missing", "damaged"


@dataclass(frozen=True)
class RecentFile:
    path: str
    state: str  # OK, MISSING or DAMAGED
    problem: Text | None = None  # why a damaged file did not pass


def _folder_suffix(path: str, levels: int) -> str:
    """The last ``levels`` folders of ``path``'s folder after "…" (the whole folder when that is all of it)."""
    folder = PurePath(path).parent
    parts = folder.parts
    if levels >= len(parts) - 1:  # all but the root: the folder as it is
        return str(folder)
    return "…" + os.sep + os.sep.join(parts[-levels:])


def recent_labels(paths: Sequence[str]) -> list[str]:
    """Each path's file name; names shared by several paths get " — …/folder", as many folders up as it takes to
    tell them apart (the full folder when nothing shorter does)."""
    names = [PurePath(path).name for path in paths]
    labels = list(names)
    for name in set(names):
        group = [i for i, other in enumerate(names) if other == name]
        if len(group) < 2:
            continue
        depth = max(len(PurePath(paths[i]).parent.parts) for i in group)
        for levels in range(1, depth + 1):
            suffixes = [_folder_suffix(paths[i], levels) for i in group]
            if len(set(suffixes)) == len(group) or levels == depth:
                break
        for i, suffix in zip(group, suffixes, strict=True):
            labels[i] = f"{name} — {suffix}"
    return labels


def check_recent(paths: Sequence[str]) -> list[RecentFile]:
    """Whether each recent file is still there and its header still passes the cheap checks (worker thread)."""
    found = []
    for path in paths:
        if not os.path.isfile(path):
            found.append(RecentFile(path, MISSING))
            continue
        model = inspect(LocalModel(path, PurePath(path).name, "recent", 0))
        damaged = model.status is Status.ERROR
        found.append(RecentFile(path, DAMAGED if damaged else OK, model.message if damaged else None))
    return found
