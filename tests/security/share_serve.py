"""`serve --share … --json` as the share tests start it: read its events until the server is ready and the share
is printed (or the server failed)."""

from __future__ import annotations

import json
import subprocess


def read_until_shared(proc: subprocess.Popen) -> tuple[list[dict], dict | None]:
    """The events read so far and the share event (None if none came). The share is printed once started, which
    may be after the server is ready."""
    events, share = [], None
    for line in proc.stdout:
        events.append(json.loads(line))
        share = events[-1] if events[-1]["event"] == "share" else share
        states = [e.get("state") for e in events if e["event"] == "state"]
        if "failed" in states or ("ready" in states and share):
            break
    return events, share
