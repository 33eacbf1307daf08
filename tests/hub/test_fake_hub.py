"""The fake Hub answers the real huggingface_hub client's own calls: list_models, model_info, list_repo_tree with
expand, get_hf_file_metadata (HEAD, redirect headers) and hf_hub_download (a file stored under its SHA-256)."""

from __future__ import annotations

from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_download, hf_hub_url

from tests.hub import fixtures
from tests.hub.fixtures import GATED, TINY
from tests.model_cache import sha256_of

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names


def test_list_models_and_model_info(fake_hub):
    api = HfApi(endpoint=fake_hub.url, token=False)
    assert [m.id for m in api.list_models(search="llama", filter="gguf", limit=5)] == [TINY, GATED]
    info = api.model_info(TINY, files_metadata=True)
    sibling = next(s for s in info.siblings or [] if s.rfilename == "tiny-llama-F16.gguf")
    assert sibling.lfs is not None and sibling.size == sibling.lfs.size and len(sibling.lfs.sha256) == 64
    readme = next(s for s in info.siblings or [] if s.rfilename == "README.md")
    assert readme.lfs is None and readme.blob_id  # a small file is a git blob, as on the Hub
    assert api.model_info(GATED).gated == "auto"


def test_list_repo_tree_with_expand(fake_hub, hub_files):
    api = HfApi(endpoint=fake_hub.url, token=False)
    files = {f.path: f for f in api.list_repo_tree(TINY, recursive=True, expand=True)}
    entry = files["split/tiny-llama-F16-split-00002-of-00003.gguf"]
    assert getattr(entry, "lfs", None) is not None
    assert entry.lfs.sha256 == sha256_of(hub_files["split/tiny-llama-F16-split-00002-of-00003.gguf"])
    assert entry.last_commit is not None


def test_file_metadata_and_download(fake_hub, hub_files, tmp_path):
    url = hf_hub_url(TINY, "tiny-llama-F16.gguf", endpoint=fake_hub.url)
    meta = get_hf_file_metadata(url, token=False)
    local = hub_files["tiny-llama-F16.gguf"]
    assert meta.size == local.stat().st_size and meta.etag == sha256_of(local)
    assert meta.commit_hash == fake_hub.repos[TINY].sha and meta.location.startswith("http://localhost:")
    path = hf_hub_download(TINY, "tiny-llama-F16.gguf", endpoint=fake_hub.url, cache_dir=tmp_path, token=False)
    assert sha256_of(path) == sha256_of(local)
