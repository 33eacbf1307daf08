"""Print the ``PINS`` table of app/core/launch/release_pins.py for the GPU archives of the app's llama.cpp release.

Run on a machine with network, review, paste into release_pins.py:

    .venv/bin/python scripts/pin_llama_release.py            # digests and sizes from the GitHub releases API
    .venv/bin/python scripts/pin_llama_release.py --download # also download each archive and hash it here

The API gives each asset ``size`` and ``digest`` ("sha256:<hex>"); --download checks that the bytes served are the
ones the digest names (about 1.5 GB for all of them). An asset the release does not have is reported, never
guessed. Exit 1 when the listing cannot be read, or an asset is missing, has no digest, or its bytes differ.

The listing is read as the app reads it when it holds no pin (app/core/hub/github_release.py, through the app's
HTTP client: --proxy, else the system's proxy).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.hub.github_release import ListingUnavailable, ReleaseListing, parse_release, read_release
from app.core.hub.source import HubAccess
from app.core.launch.release_builds import LINUX_X64, WINDOWS_X64, official_source, release_builds

API = official_source().api_url or ""


def wanted_assets() -> list[str]:
    return [asset for key in (WINDOWS_X64, LINUX_X64) for build in release_builds(key) for asset in build.assets]


def pins_from_release(release: dict, names: list[str]) -> tuple[dict[str, tuple[str, int]], list[str]]:
    """(name -> (sha256, size)) for the ``names`` the release lists with a sha256 digest, and the problems
    (ValueError when ``release`` is not a release listing)."""
    return pins_from_listing(parse_release(release, API), names)


def pins_from_listing(listing: ReleaseListing, names: list[str]) -> tuple[dict[str, tuple[str, int]], list[str]]:
    pins: dict[str, tuple[str, int]] = {}
    problems: list[str] = []
    for name in names:
        asset = listing.assets.get(name)
        if asset is None:
            alike = listing.look_alike(name)
            problems.append(f"{name}: not in release {listing.tag}" + (f" (look alike: {', '.join(alike)})"
                                                                       if alike else ""))
        elif asset.sha256 is None:
            problems.append(f"{name}: no sha256 digest ({asset.digest or 'none'})")
        else:
            pins[name] = (asset.sha256, asset.size)
    return pins, problems


def _downloaded_sha256(url: str, access: HubAccess) -> str:
    from app.core.hub.http import client

    digest = hashlib.sha256()
    with client(access).stream("GET", url, timeout=60) as response:
        response.raise_for_status()
        for block in response.iter_bytes():
            digest.update(block)
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--download", action="store_true", help="download every archive and hash it here too")
    parser.add_argument("--proxy", metavar="URL", help="send every request through this proxy")
    args = parser.parse_args()
    source = official_source()
    try:
        listing = read_release(API, HubAccess(endpoint=source.api_base, proxy=args.proxy))
    except ListingUnavailable as error:
        print(f"problem: the listing {API} could not be read: {error.why.render('en')}", file=sys.stderr)
        return 1
    pins, problems = pins_from_listing(listing, wanted_assets())
    if args.download:
        for name, (sha256, _) in pins.items():
            got = _downloaded_sha256(source.url(name), HubAccess(endpoint=source.base_url, proxy=args.proxy))
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
