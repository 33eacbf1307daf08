"""The SHA-256 and size the app holds for each archive of llama.cpp release b11434 it may download. A pin here
decides what the bytes must be; for an archive without one, app/core/hub/engine_fetch.py checks the bytes against
the SHA-256 GitHub publishes for the asset in the release's listing (app/core/hub/github_release.py), and when both
exist and differ it downloads nothing.

Empty on purpose: no published digest of b11434's GPU assets could be found from here (the GitHub releases API
gives each asset a ``digest`` field, "sha256:<hex>"; this session had no network, and no public page or repository
searched quoted b11434's). A digest is never invented. Filling the table from the API on a machine with network
(``scripts/pin_llama_release.py`` prints the entries, checked in review) makes the app independent of the listing
being readable, and lets it notice an asset that was replaced after review (the two would differ).

For reference only (NOT a b11434 digest): SubtitleEdit/subtitleedit's LlamaCppDownloadServiceTests pin
``cudart-llama-bin-win-cuda-12.4-x64.zip`` as 8c79a9b226de4b3cacfd1f83d24f962d0773be79f1e7b75c6af4ded7e32ae1d6, and
its pull requests (#11615, #13041) report that archive byte-identical across releases since b9297; the script's
``--download`` shows whether b11434's is the same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pin:
    """What the app holds for one archive: its SHA-256 and size in bytes."""

    sha256: str
    size: int


PINS: dict[str, Pin] = {}
