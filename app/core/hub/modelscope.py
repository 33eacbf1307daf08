"""ModelScope (modelscope.cn) as a source: one repository's GGUF files with their size and SHA-256, and the URL each
is downloaded from, over a small HTTP client of our own (ModelScope's API is not the Hub's, and its SDK would be a
large new dependency).

Every format here is the official SDK's (github.com/modelscope/modelscope at 1804ac6b, the last commit before its hub
code moved into the separate modelscope_hub package; the files named are under modelscope/hub/):
- the file list: ``api.py`` ``HubApi.get_model_files``: ``GET {endpoint}/api/v1/models/{owner}/{name}/repo/files
  ?Revision={rev}&Recursive=True`` answers ``{"Code": 200, "Data": {"Files": [{"Name", "Path", "Type", "Size",
  "Sha256", ...}]}, "Message", "Success"}``; ``raise_on_error`` (``errors.py``) refuses a ``Code`` other than 200
  with its ``Message``; entries of ``Type`` "tree" are folders (``file_download._repo_file_download`` skips them);
- a file's bytes: ``file_download.get_file_download_url``: ``{endpoint}/api/v1/models/{owner}/{name}/repo
  ?Revision={rev}&FilePath={quote_plus(path)}``, fetched with ``Range: bytes=a-b`` (``http_get_model_file``) and
  verified against the listing's ``Sha256`` (``FILE_HASH`` in ``constants.py``, ``download_file``);
- the revision: ``DEFAULT_MODEL_REVISION = 'master'`` (``modelscope/utils/constant.py``);
- the token: sent as the cookie ``m_session_id`` (``HubApi._get_cookies``), its variable ``MODELSCOPE_API_TOKEN``;
- errors: ``handle_http_response``: 404 "does not exist or is not accessible", 403 "may be private, please login".
The SDK has no search by words for models (``HubApi.list_models`` lists one owner's models): ``search`` lists the
repository when the text is one, and says in one sentence that words cannot be searched otherwise.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote, quote_plus

from app.core.hub.errors import HubError, bad_answer, from_status, gated, hub_error, not_found
from app.core.hub.files import HubFile, RepoListing, group_models
from app.core.hub.source import HubAccess

logger = logging.getLogger(__name__)

REVISION = "master"  # the SDK's DEFAULT_MODEL_REVISION
TOKEN_VARIABLE = "MODELSCOPE_API_TOKEN"  # where the SDK reads a token from (HubApi.get_cookies)


def file_url(endpoint: str, repo: str, path: str, revision: str = REVISION) -> str:
    """``file_download.get_file_download_url``'s address of one file."""
    return (f"{endpoint}/api/v1/models/{quote(repo, safe='/')}/repo?Revision={quote_plus(revision)}"
            f"&FilePath={quote_plus(path)}")


def list_files(repo: str, access: HubAccess) -> RepoListing:
    """The GGUF models and projectors of ``repo`` on ModelScope at ``master``, with sizes, SHA-256 and URLs."""
    from app.core.hub.http import client, modelscope_headers, timeout

    endpoint = access.url
    url = f"{endpoint}/api/v1/models/{quote(repo, safe='/')}/repo/files"
    try:
        response = client(access).get(url, params={"Revision": REVISION, "Recursive": "True"},
                                      headers=modelscope_headers(access), timeout=timeout(access))
        if response.status_code >= 400:
            raise from_status(access, response.status_code, response.headers, repo)
        files = _files(_data(response.json(), access, repo), access)
    except Exception as error:  # hub_error re-raises what is not a Hub failure
        raise hub_error(error, access, repo) from error
    listed = [HubFile(f["Path"], f["Size"], f.get("Sha256") or None, file_url(endpoint, repo, f["Path"]))
              for f in files]
    models, projectors = group_models(repo, listed)
    return RepoListing(repo, REVISION, None, models, projectors)


def _data(body: Any, access: HubAccess, repo: str) -> dict[str, Any]:
    """``Data`` of an answer whose ``Code`` is 200 (errors.raise_on_error); a Code that is an HTTP status of its own
    (401/403/404) is that error."""
    if not isinstance(body, dict):
        raise bad_answer(access, "the answer is not a JSON object")
    code = body.get("Code")
    if code in (401, 403):
        raise gated(repo, code, access.source)
    if code == 404:
        raise not_found(repo, access.source)
    if code != 200:
        raise bad_answer(access, f"code {code}: {str(body.get('Message'))[:200]}")
    data = body.get("Data")
    if not isinstance(data, dict):
        raise bad_answer(access, "no Data in the answer")
    return data


def _files(data: dict[str, Any], access: HubAccess) -> list[dict[str, Any]]:
    files = data.get("Files") or []
    if not isinstance(files, list):
        raise bad_answer(access, "Files is not a list")
    found = []
    for entry in files:
        if not isinstance(entry, dict) or entry.get("Type") == "tree":
            continue
        if not isinstance(entry.get("Path"), str) or not isinstance(entry.get("Size"), int):
            raise bad_answer(access, "a file without Path or Size")
        found.append(entry)
    return found


def search(text: str, access: HubAccess) -> list[str]:
    """The repository ``text`` names, once its file list answers; HubError NOT_SUPPORTED for words."""
    from app.core.hub.errors import not_supported
    from app.core.hub.source import is_repo_id

    if not is_repo_id(text):
        raise not_supported(access.source)
    listing = list_files(text.strip(), access)
    return [listing.repo]


__all__ = ["HubError", "REVISION", "TOKEN_VARIABLE", "file_url", "list_files", "search"]
