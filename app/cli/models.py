"""`gguf-launcher models [--json] [--folder DIR ...]`: the GGUF files other apps already downloaded on this computer
(Ollama, LM Studio, Jan, the Hugging Face cache, llama.cpp's cache) and the folders added in the app."""

from __future__ import annotations

import argparse

from app.cli._output import print_json
from app.core.library.scan import LocalModel, find_local_models
from app.core.problem import Status
from app.core.text import T, human_bytes
from app.core.text_safety import inert

_MARKS = {Status.OK: "ok  ", Status.WARNING: "warn", Status.ERROR: "FAIL", None: "    "}


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("models", help="list the GGUF models other apps already downloaded")
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    parser.add_argument("--folder", action="append", default=[], metavar="DIR",
                        help="also look in this folder (repeatable); the folders added in the app are searched too")
    parser.add_argument("--no-checks", action="store_true", help="list the files without reading their headers")
    return parser


def _saved_folders() -> list[str]:
    from app.cli._settings import load_settings_saying_why

    try:
        return load_settings_saying_why().model_folders
    except Exception:  # noqa: BLE001 - a damaged settings file must not stop the list
        return []


def run(args: argparse.Namespace) -> int:
    folders = [*_saved_folders(), *args.folder]
    models = find_local_models(extra_folders=folders, check=not args.no_checks)
    if args.json:
        print_json({"models": [m.to_dict() for m in models]})
        return 0
    if not models:
        print(str(T("No GGUF models found from Ollama, LM Studio, Jan, the Hugging Face cache or llama.cpp's cache.",
                    "未在 Ollama、LM Studio、Jan、Hugging Face 缓存或 llama.cpp 缓存中找到 GGUF 模型。")))
        return 0
    for line in describe(models):
        print(inert(line, one_line=False))
    return 0


def describe(models: list[LocalModel]) -> list[str]:
    lines = []
    for model in models:
        quant = model.quant or "?"
        lines.append(f"[{_MARKS.get(model.status, '    ')}] {model.name}  {human_bytes(model.size)}  {quant}  "
                     f"({model.app_name})")
        lines.append(f"       {model.path}")
        if model.message is not None:
            lines.append(f"       -> {model.message}")
    return lines
