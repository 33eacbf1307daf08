"""Print the ``PINS`` table of app/core/launch/release_pins.py for the GPU archives of the app's llama.cpp release.

Run on a machine with network, review, paste into release_pins.py:

    .venv/bin/python scripts/pin_llama_release.py            # digests and sizes from the GitHub releases API
    .venv/bin/python scripts/pin_llama_release.py --download # also download each archive and hash it here

The API gives each asset ``size`` and ``digest`` ("sha256:<hex>"); --download checks that the bytes served are the
ones the digest names (about 1.5 GB for all of them). An asset the release does not have is reported, never
guessed. Exit 1 when an asset is missing, has no digest, or its bytes differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.launch.release_builds import LINUX_X64, RELEASE_TAG, WINDOWS_X64, official_source, release_builds

API = f"https://api.github.com/repos/ggml-org/llama.cpp/releases/tags/{RELEASE_TAG}"


def wanted_assets() -> list[str]:
    return [asset for key in (WINDOWS_X64, LINUX_X64) for build in release_builds(key) for asset in build.assets]


def pins_from_release(release: dict, names: list[str]) -> tuple[dict[str, tuple[str, int]], list[str]]:
    """(name -> (sha256, size)) for the ``names`` the release lists with a sha256 digest, and the problems."""
    assets = {asset.get("name"): asset for asset in release.get("assets", [])}
    pins: dict[str, tuple[str, int]] = {}
    problems: list[str] = []
    for name in names:
        asset = assets.get(name)
        digest = (asset or {}).get("digest") or ""
        if asset is None:
            problems.append(f"{name}: not in release {release.get('tag_name')}")
        elif not digest.startswith("sha256:") or len(digest) != len("sha256:") + 64:
            problems.append(f"{name}: no sha256 digest ({digest or 'none'})")
        else:
            pins[name] = (digest.removeprefix("sha256:"), int(asset["size"]))
    return pins, problems


def _downloaded_sha256(url: str) -> str:
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=60) as response:
        while block := response.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--download", action="store_true", help="download every archive and hash it here too")
    args = parser.parse_args()
    with urllib.request.urlopen(API, timeout=30) as response:
        release = json.load(response)
    pins, problems = pins_from_release(release, wanted_assets())
    if args.download:
        for name, (sha256, _) in pins.items():
            got = _downloaded_sha256(official_source().url(name))
            if got != sha256:
                problems.append(f"{name}: the API says {sha256}, the bytes hash to {got}")
    print(f"# from {API} ({'downloaded and hashed here too' if args.download else 'API digests only'})")
    print("PINS: dict[str, Pin] = {")
    for name, (sha256, size) in pins.items():
        print(f'    "{name}": Pin("{sha256}", {size}),')
    print("}")
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
