"""`gguf-launcher report [--out FILE.zip] [--model PATH] [--keep-host-names] [--json]`: write a diagnostics zip (scan,
doctor, plan, probe result, engine builds, last diagnoses, recent logs), redacted, and print where it is."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli._output import print_json, report_user_error
from app.cli._settings import load_settings_saying_why
from app.core.problem import UserError
from app.core.report.bundle import ReportOptions, write_report
from app.core.text import T


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("report", help="write a redacted diagnostics zip to send to whoever helps you")
    parser.add_argument("--out", type=Path, metavar="FILE.zip", help="where to write it (default: the app's reports "
                                                                      "folder, a new name each time)")
    parser.add_argument("--model", metavar="PATH", help="the model to check and plan (default: the last one opened)")
    parser.add_argument("--keep-host-names", action="store_true", help="leave this computer's name in the report")
    parser.add_argument("--json", action="store_true", help="print the zip's path and contents as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    load_settings_saying_why()  # a settings file set aside is said once, before the report reads the fresh one
    try:
        result = write_report(ReportOptions(out=args.out, model=args.model, keep_host_names=args.keep_host_names))
    except UserError as error:
        return report_user_error(error, args.json)
    if args.json:
        print_json(result.to_dict())
        return 0
    print(str(T("Diagnostics report written: {path}", "诊断报告已写入：{path}", path=str(result.path))))
    print(str(T("It holds {n} files; secrets, your user name and home folder were removed.",
                "其中有 {n} 个文件；密钥、用户名和主文件夹路径已去除。", n=len(result.files))))
    for problem in result.problems:
        print(str(T("  not included: {what}", "  未包含：{what}", what=problem)))
    return 0
