"""Search the Hub for GGUF repositories and list one repository's GGUF files, through huggingface_hub.

The file list is the request ``HfApi.model_info(repo, files_metadata=True)`` sends (``GET /api/models/{repo}
?blobs=true``, parsed by its ``ModelInfo``): every file's size and, for LFS files, the SHA-256 the Hub publishes.
The search is the one ``GET /api/models?search=…&filter=gguf`` that ``HfApi.list_models`` sends, through
huggingface_hub's error mapping (``hf_raise_for_status``) and parser (``ModelInfo``), but without ``list_models``'
retry loop: that loop has no time limit (it passes ``timeout=None``) and answers a 429 by sleeping its Retry-After
up to five times, where the user must hear at once that the Hub cannot be reached or asks to wait. Both go through
app.core.hub.http's client: huggingface_hub's session, or one through the user's own proxy. ModelScope's API is
another one: app.core.hub.modelscope answers for it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.core.hub.errors import HubError, bad_answer, hub_error
from app.core.hub.files import HubFile, RepoListing, group_models
from app.core.hub.source import HubAccess, HubSource, is_repo_id

logger = logging.getLogger(__name__)
SEARCH_LIMIT = 20


@dataclass(frozen=True)
class RepoHit:
    """A repository the search found."""

    repo: str
    downloads: int | None
    likes: int | None
    gated: bool | str | None

    def to_dict(self) -> dict[str, Any]:
        return {"repo": self.repo, "downloads": self.downloads, "likes": self.likes, "gated": self.gated}


def _endpoint(access: HubAccess) -> str:
    return access.url


def search(text: str, access: HubAccess, limit: int = SEARCH_LIMIT) -> list[RepoHit]:
    """GGUF repositories whose name matches ``text``, most downloaded first; HubError in one sentence on failure."""
    if access.source is HubSource.MODELSCOPE:
        from app.core.hub import modelscope

        return [RepoHit(repo, None, None, None) for repo in modelscope.search(text, access)]
    from huggingface_hub import ModelInfo
    from huggingface_hub.utils import hf_raise_for_status

    from app.core.hub.http import client, request_headers, timeout

    url = f"{_endpoint(access)}/api/models"
    params = {"search": text, "filter": "gguf", "sort": "downloads", "limit": limit}
    try:
        response = client(access).get(url, params=params, headers=request_headers(access), timeout=timeout(access))
        hf_raise_for_status(response)
        items = response.json()
        if not isinstance(items, list):
            raise bad_answer(access, "the search did not return a list")
        infos = [ModelInfo(**{**item, "siblings": item.get("siblings")}) for item in items[:limit]]
    except Exception as error:  # hub_error re-raises what is not a Hub failure
        raise hub_error(error, access, text) from error
    return [RepoHit(info.id, info.downloads, info.likes, info.gated) for info in infos]


def list_files(repo: str, access: HubAccess) -> RepoListing:
    """The GGUF models and projectors of ``repo`` with sizes, SHA-256 and URLs (all at the listed commit)."""
    if access.source is HubSource.MODELSCOPE:
        from app.core.hub import modelscope

        return modelscope.list_files(repo, access)
    from huggingface_hub import ModelInfo, hf_hub_url
    from huggingface_hub.utils import hf_raise_for_status

    from app.core.hub.http import client, request_headers, timeout

    endpoint = _endpoint(access)
    try:  # HfApi.model_info(repo, files_metadata=True)'s request, through this access's client (its proxy)
        response = client(access).get(f"{endpoint}/api/models/{repo}", params={"blobs": True},
                                      headers=request_headers(access), timeout=timeout(access))
        hf_raise_for_status(response)
        info = ModelInfo(**response.json())
    except Exception as error:  # hub_error re-raises what is not a Hub failure
        raise hub_error(error, access, repo) from error
    revision = info.sha or "main"
    files = [HubFile(s.rfilename, s.size, s.lfs.sha256 if s.lfs is not None else None,
                     hf_hub_url(repo, s.rfilename, revision=revision, endpoint=endpoint))
             for s in info.siblings or []]
    models, projectors = group_models(repo, files)
    return RepoListing(repo, info.sha, info.gated, models, projectors)


__all__ = ["HubError", "RepoHit", "is_repo_id", "list_files", "search"]
