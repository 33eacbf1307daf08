"""A fake home with the model folders other apps keep (Ollama, Hugging Face cache, LM Studio, Jan, llama.cpp),
filled with generated tiny GGUFs. Tests point the scanner at it through ``env``; never the real home."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama


def _ollama(home: Path, name: str, tag: str, namespace: str = "library", f16: bool = False) -> Path:
    models = home / ".ollama" / "models"
    tmp = write_tiny_llama(home / "tmp-ollama.gguf", TinyModelSpec(f16=f16))
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    blob = models / "blobs" / f"sha256-{digest}"
    blob.parent.mkdir(parents=True, exist_ok=True)
    tmp.replace(blob)
    config = models / "blobs" / ("sha256-" + "c" * 64)
    config.write_text("{}")
    manifest = models / "manifests" / "registry.ollama.ai" / namespace / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "config": {"digest": "sha256:" + "c" * 64}, "layers": [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "d" * 64, "size": 10},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": blob.stat().st_size},
    ]}))
    return blob


def _hf(home: Path) -> Path:
    repo = home / ".cache" / "huggingface" / "hub" / "models--org--tiny-GGUF"
    blob = write_tiny_llama(repo / "blobs" / ("e" * 64))
    for revision in ("rev1", "rev2"):  # two snapshots of the same blob: listed once
        link = repo / "snapshots" / revision / "tiny-Q8_0.gguf"
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, link.parent), link)
    (repo / "snapshots" / "rev1" / "README.md").write_text("not a model")
    return repo / "snapshots" / "rev1" / "tiny-Q8_0.gguf"


def make_fake_home(root: Path) -> dict[str, Path]:
    """Build the fake home under ``root``; returns the interesting paths by name."""
    home = root / "home"
    paths = {
        "ollama": _ollama(home, "tiny", "latest"),
        "ollama_user": _ollama(home, "tiny", "f16", namespace="someone", f16=True),
        "hf": _hf(home),
        "lm_studio": write_tiny_llama(home / ".lmstudio" / "models" / "pub" / "tiny-GGUF" / "tiny-lms.gguf"),
        "jan": write_tiny_llama(home / "jan" / "models" / "tiny-jan" / "model.gguf"),
        "llama_cpp": write_tiny_llama(home / ".cache" / "llama.cpp" / "org_tiny-cached.gguf"),
    }
    broken = home / ".lmstudio" / "models" / "pub" / "broken" / "broken.gguf"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(paths["jan"].read_bytes()[:3000])  # a truncated download
    paths["broken"] = broken
    (home / ".lmstudio" / "models" / "pub" / "notes.txt").write_text("hello")
    paths["home"] = home
    return paths


def fake_env(home: Path) -> dict[str, str]:
    """An environment naming only the fake home (the real one's HF_HOME, OLLAMA_MODELS... are left out)."""
    return {"HOME": str(home), "USERPROFILE": str(home)}
