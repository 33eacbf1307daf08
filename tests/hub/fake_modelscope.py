"""A loopback stand-in for ModelScope (modelscope.cn): the fake Hub's server, files and faults (tests/hub/fake_hub.py)
answering ModelScope's API instead of the Hugging Face Hub's.

Its answers follow the official SDK's parsing code, read at github.com/modelscope/modelscope commit
1804ac6bf8b6b76c9cc43974e4822e27536bc6e5 (the last one with the hub code in the repository itself):
- ``GET /api/v1/models/{owner}/{name}/repo/files?Revision=&Recursive=``: ``{"Code": 200, "Data": {"Files": [...]},
  "Message": "success", "Success": true}`` as ``modelscope/hub/api.py`` ``HubApi.get_model_files`` reads it
  (``d['Data']['Files']``, each entry's ``Name`` / ``Path`` / ``Type`` / ``Size`` / ``Sha256``, the latter as
  ``file_download.download_file`` compares it (``FILE_HASH = 'Sha256'`` in ``hub/constants.py``); folders are entries
  of ``Type`` "tree", as ``file_download._repo_file_download`` skips them; ``.gitattributes`` is listed and the SDK
  drops it by name);
- ``GET /api/v1/models/{owner}/{name}/repo?Revision=&FilePath=``: the file's bytes, ``Range: bytes=a-b`` answered
  206 (``file_download.get_file_download_url`` and ``http_get_model_file``, which always sends a Range);
- errors as ``hub/errors.py`` ``handle_http_response`` tells them apart: 404 for a missing repository or file, 403
  for a private repository without the owner's token; the token arrives as the cookie ``m_session_id``
  (``HubApi._get_cookies``). The JSON bodies of errors carry ``Code`` / ``Message`` / ``Success: false``.
The fake Hub's faults (a status, 429 with Retry-After, a delay, a cut or slow body) apply here unchanged.
"""

from __future__ import annotations

import re
from http.cookies import SimpleCookie

from tests.hub.fake_hub import FakeHub, FakeRepo, _handler

_FILES = re.compile(r"^/api/v1/models/(?P<repo>[^/]+/[^/]+)/repo/files$")
_FILE = re.compile(r"^/api/v1/models/(?P<repo>[^/]+/[^/]+)/repo$")


class FakeModelScope(FakeHub):
    """``with FakeModelScope() as ms: ms.add(FakeRepo(...)); HubAccess(HubSource.MODELSCOPE, endpoint=ms.url)``."""

    def __init__(self) -> None:
        super().__init__()
        self._server.RequestHandlerClass = _modelscope_handler(self)


def _modelscope_handler(hub: FakeModelScope):
    base = _handler(hub)

    class Handler(base):  # type: ignore[valid-type, misc]
        def _error(self, status: int, code: str, message: str, head: bool) -> None:
            self._json(status, {"Code": status, "Message": message, "RequestId": "fake", "Success": False}, head)

        def _token(self) -> str | None:
            cookie = SimpleCookie(self.headers.get("Cookie") or "")
            return cookie["m_session_id"].value if "m_session_id" in cookie else None

        def _repo(self, name: str, head: bool) -> FakeRepo | None:
            repo = hub.repos.get(name)
            if repo is None:
                self._error(404, "NotFound", f"{name} does not exist", head)
                return None
            if (repo.private or repo.gated) and self._token() not in repo.allowed_tokens:
                self._error(403, "Forbidden", "Authentication token does not exist or is invalid", head)
                return None
            return repo

        def _route(self, path: str, query: dict, head: bool) -> None:
            match = _FILES.match(path)
            if match:
                return self._list(match["repo"], query, head)
            match = _FILE.match(path)
            if match:
                return self._download(match["repo"], query, head)
            self._error(404, "NotFound", "Not found", head)

        def _list(self, name: str, query: dict, head: bool) -> None:
            repo = self._repo(name, head)
            if repo is None:
                return
            entries: list[dict] = [{"Name": ".gitattributes", "Path": ".gitattributes", "Type": "blob", "Size": 10,
                                    "Sha256": "", "Revision": repo.sha, "IsLFS": False}]
            folders = sorted({n.rsplit("/", 1)[0] for n in repo.files if "/" in n})
            entries += [{"Name": f.rsplit("/", 1)[-1], "Path": f, "Type": "tree", "Size": 0, "Sha256": "",
                         "Revision": repo.sha, "IsLFS": False} for f in folders]
            for path, file in sorted(repo.files.items()):
                entries.append({"Name": path.rsplit("/", 1)[-1], "Path": path, "Type": "blob",
                                "Size": file.stat().st_size, "Sha256": repo.sha256(path), "Revision": repo.sha,
                                "IsLFS": repo.is_lfs(path), "Mode": "33188", "CommitMessage": "upload",
                                "CommittedDate": 1764460800})
            self._json(200, {"Code": 200, "Data": {"Files": entries}, "Message": "success", "RequestId": "fake",
                             "Success": True}, head)

        def _download(self, name: str, query: dict, head: bool) -> None:
            repo = self._repo(name, head)
            if repo is None:
                return
            path = (query.get("FilePath") or [""])[0]
            if path not in repo.files:
                return self._error(404, "NotFound", f"{path} does not exist", head)
            self._file(repo, path, head, {"Accept-Ranges": "bytes"})

    return Handler
