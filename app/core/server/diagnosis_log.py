"""The last diagnoses of this machine's servers, kept in ``diagnoses.jsonl`` beside the server logs, so a
diagnostics report can say what went wrong before (the supervisor holds only its own last one, in memory).

One JSON object a line, newest last, at most ``KEEP`` lines: when it was, which log, the model's file name (never
its folder) and the diagnosis in English. Writing never raises: without a writable log folder nothing is kept.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from app.core.atomic import write_bytes_atomic
from app.core.bounded_json import UnreadableJson, loads_bounded, read_text
from app.core.paths import log_dir

logger = logging.getLogger(__name__)

FILE_NAME = "diagnoses.jsonl"
KEEP = 50
_lock = threading.Lock()


def diagnoses_path(directory: Path | None = None) -> Path:
    return (directory or log_dir()) / FILE_NAME


def record_diagnosis(diagnosis: Any, *, model: str, log_name: str, directory: Path | None = None) -> None:
    """Append one diagnosis (a core ``Diagnosis``); the oldest lines go beyond ``KEEP``."""
    entry = {"time": round(time.time(), 3), "log": log_name, "model": os.path.basename(model),
             **diagnosis.to_dict("en")}
    path = diagnoses_path(directory)
    with _lock:
        try:
            kept = [*read_diagnoses(directory), entry][-KEEP:]
            text = "".join(json.dumps(item, ensure_ascii=False, default=str) + "\n" for item in kept)
            write_bytes_atomic(path, text.encode("utf-8"))
        except OSError as error:
            logger.info("could not keep the diagnosis in %s: %s", path, error)


def read_diagnoses(directory: Path | None = None) -> list[dict[str, Any]]:
    """The kept diagnoses, oldest first; a damaged line is skipped, a missing file is no diagnoses."""
    path = diagnoses_path(directory)
    try:
        lines = read_text(path).splitlines()  # a regular file of bounded size: never a FIFO or /dev/zero
    except FileNotFoundError:
        return []
    except (OSError, UnreadableJson) as error:
        logger.info("could not read %s: %s", path, error)
        return []
    found = []
    for line in lines:
        try:
            item = loads_bounded(line)
        except ValueError:  # damaged, or nested too deep (UnreadableJson)
            continue
        if isinstance(item, dict):
            found.append(item)
    return found
