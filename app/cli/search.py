"""`gguf-launcher search TEXT`: GGUF repositories on the Hub, each file with its size, SHA-256 and a fit verdict for
this computer, read from the file's header with HTTP range requests (a few MB, not the file).

TEXT may be search words or a repository ("owner/name"). Exit 0 when something was found, 1 when nothing was or on
an error, 2 for usage errors. A token for gated or private repositories is read from the HF_TOKEN environment
variable, for ModelScope from MODELSCOPE_API_TOKEN (never from other tools' saved logins, so a mirror never sees one
by accident). ModelScope offers no search by words: TEXT must name a repository there.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from app.cli._engine import add_backend_argument, chosen_backend
from app.cli._output import print_json, report_user_error
from app.cli._types import parse_bytes, positive_int
from app.core.problem import UserError
from app.core.text import T, human_bytes
from app.core.text_safety import inert

_MARK = {"fits_gpu": "gpu ", "partial_gpu": "part", "cpu_only": "cpu ", "does_not_fit": "no  ", "unknown": "?   "}


SOURCES = ("hf", "hf-mirror", "modelscope")  # app.core.hub.source.HubSource's values, named here so that building
# the parser (every start of the app) imports nothing of app.core.hub


def token_variable(source: str) -> str:
    """The environment variable the token for ``source`` is read from (ModelScope's SDK reads MODELSCOPE_API_TOKEN):
    a Hugging Face token is never sent to ModelScope, nor the other way round."""
    return "MODELSCOPE_API_TOKEN" if source == "modelscope" else "HF_TOKEN"


def add_hub_arguments(parser: argparse.ArgumentParser, where: str) -> None:
    """--source, --endpoint and --proxy, shared with `get`."""
    parser.add_argument("--source", choices=SOURCES, default=SOURCES[0],
                        help=f"{where}: Hugging Face, its mirror hf-mirror.com, or ModelScope "
                             "(default: %(default)s; hf honours HF_ENDPOINT, modelscope MODELSCOPE_DOMAIN)")
    parser.add_argument("--endpoint", metavar="URL", help="a server with the source's API at this address instead")
    parser.add_argument("--proxy", metavar="URL",
                        help="send every request through this proxy (default: the one saved in Settings, else the "
                             "system's, HTTP(S)_PROXY)")


def hub_access(args):
    """The HubAccess the arguments ask for (imports app.core.hub: call it in run(), not while building the parser)."""
    from app.cli._settings import load_settings_saying_why
    from app.core.hub.source import HubAccess, HubSource

    proxy = args.proxy or load_settings_saying_why().get("hub_proxy") or None
    return HubAccess(HubSource(args.source), endpoint=args.endpoint,
                     token=os.environ.get(token_variable(args.source)) or None, proxy=proxy)


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("search", help="search the Hub for GGUF models, with a fit verdict per file",
                                   description=__doc__)
    parser.add_argument("text", help="search words, or a repository such as owner/name")
    add_hub_arguments(parser, "where to search")
    parser.add_argument("--limit", type=positive_int, default=3, help="repositories to list (default: %(default)s)")
    parser.add_argument("--no-fit", action="store_true", help="list the files without reading their headers")
    parser.add_argument("--vram-budget", type=parse_bytes, metavar="BYTES",
                        help="judge for one GPU with this much free memory (e.g. 8G), even without a GPU")
    add_backend_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    return parser


def _listings(args, access) -> list[tuple[Any, Any]]:
    """(hit or None, listing or HubError) per repository: the repository TEXT names, else the search's hits."""
    from app.core.hub.client import is_repo_id, list_files, search
    from app.core.hub.errors import HubError, HubFault

    if is_repo_id(args.text):
        try:
            return [(None, list_files(args.text.strip(), access))]
        except HubError as error:
            if error.kind is not HubFault.NOT_FOUND:
                raise
    hits = search(args.text, access, limit=args.limit)
    found: list[tuple[Any, Any]] = []
    for hit in hits:
        try:
            found.append((hit, list_files(hit.repo, access)))
        except HubError as error:
            if error.kind in (HubFault.UNREACHABLE, HubFault.PROXY, HubFault.RATE_LIMITED):
                raise
            found.append((hit, error))
    return found


class _Judge:
    """Fit verdicts for listings, with the machine scanned and the engine chosen once (on the first listing)."""

    def __init__(self, args: argparse.Namespace, access) -> None:
        self._args, self._access = args, access
        self._machine: tuple[Any, str] | None = None

    def __call__(self, listing) -> list:
        from app.core.hardware.scan import scan_hardware
        from app.core.hub.remote import fit_listing

        if self._args.no_fit or not listing.models:
            return []
        if self._machine is None:
            self._machine = (scan_hardware(), chosen_backend(self._args, quiet=self._args.json))
        hw, backend = self._machine
        return fit_listing(listing, self._access, hw, backend, vram_budget=self._args.vram_budget)


def run(args) -> int:
    from app.core.hub.errors import HubError, where_text

    access = hub_access(args)
    try:
        found = _listings(args, access)
        judge = _Judge(args, access)
        results = [(hit, item, [] if isinstance(item, HubError) else judge(item))
                   for hit, item in found]
    except UserError as error:
        code = report_user_error(error, args.json)
        _token_hint(error, args.source)
        return code
    if not results:
        return report_user_error(UserError(
            T("No GGUF repository on {where} matches “{text}”.", "{where_zh}上没有与“{text}”匹配的 GGUF 仓库。",
              where=where_text(access).render("en"), where_zh=where_text(access).render("zh"), text=args.text),
            T("Try fewer or other words, e.g. a model family such as qwen or llama.",
              "请换用更少或其他的关键词，例如 qwen、llama 等模型系列名。")), args.json)
    if args.json:
        print_json(_json(access, args.text, results))
    else:
        _print(results, args.source)
    return 0


def _is_gated(error: UserError) -> bool:
    from app.core.hub.errors import HubError, HubFault

    return isinstance(error, HubError) and error.kind is HubFault.GATED


def token_hint(source: str):
    """The command line's way to give the token a gated repository's next step asks for."""
    name = token_variable(source)
    return T("(on the command line: put the token in the {name} environment variable)",
             "（命令行：把令牌放进环境变量 {name}）", name=name)


def _token_hint(error: UserError | None, source: str) -> None:
    """The token hint after a gated error (``error`` None: some file was gated)."""
    if error is None or _is_gated(error):
        sys.stderr.write(str(token_hint(source)) + "\n")


def _json(access, text: str, results) -> dict[str, Any]:
    repos = []
    for hit, item, fits in results:
        entry: dict[str, Any] = {"repo": getattr(item, "repo", None) or hit.repo,
                                 "downloads": hit.downloads if hit else None}
        if isinstance(item, UserError):
            entry["error"] = {"message": item.message.render(), "fix": str(item.next_step or "")}
        else:
            by_name = {f.name: f for f in fits}
            entry |= item.to_dict()
            entry["models"] = [m | {"fit": by_name[m["name"]].to_dict() if m["name"] in by_name else None}
                               for m in entry["models"]]
        repos.append(entry)
    total = sum(f.header_bytes for _, _, fits in results for f in fits)
    return {"source": access.source.value, "endpoint": access.url, "query": text, "repos": repos,
            "header_bytes": total}


def _print(results, source: str) -> None:
    total_bytes = total_files = 0
    gated = False
    for hit, item, fits in results:
        repo = getattr(item, "repo", None) or hit.repo
        downloads = f"  ({T('{n} downloads', '{n} 次下载', n=hit.downloads)})" if hit and hit.downloads else ""
        print(f"{inert(repo)}{downloads}")
        if isinstance(item, UserError):
            print(f"  {item.message}  {item.next_step or ''}")
            continue
        if not item.models:
            print("  " + str(T("no GGUF model files", "没有 GGUF 模型文件")))
        by_name = {f.name: f for f in fits}
        for model in item.models:
            fit = by_name.get(model.name)
            parts = f" [{T('{n} parts', '{n} 个分卷', n=model.expected_parts)}]" if model.is_split else ""
            mark = _MARK[fit.verdict.value] if fit else "    "
            best = f"  <- {T('best fit', '最合适')}" if fit and fit.best else ""
            size = human_bytes(model.size)
            print(f"  [{mark}] {model.quant or '?':<10} {size:>10}  {inert(model.name)}{parts}{best}")
            if fit is not None:
                print(f"         {fit.sentence()}")
                if fit.problem is not None and fit.problem.next_step is not None:
                    print(f"         {T('next step', '下一步')}: {fit.problem.next_step}")
                    gated = gated or _is_gated(fit.problem)
                total_bytes += fit.header_bytes
                total_files += 1
        for projector in item.projectors:
            print("  " + str(T("vision projector: {name} ({size})", "视觉投影器：{name}（{size}）",
                               name=projector.path, size=human_bytes(projector.size))))
    if gated:
        _token_hint(None, source)
    if total_files:
        print(T("Read {size} of headers for {n} files (no model data downloaded).",
                "为 {n} 个文件读取了 {size} 的文件头（未下载模型数据）。", size=human_bytes(total_bytes),
                n=total_files))
