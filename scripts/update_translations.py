"""Refresh the Chinese UI translation: extract every tr() string from app/ui, fill from the glossary, compile.

    .venv/bin/python scripts/update_translations.py          # update .ts, fill, compile .qm
    .venv/bin/python scripts/update_translations.py --check  # exit 1 if any UI string lacks a translation

Source of truth for the Chinese text: resources/translations/zh_CN.json ({"English source": "中文"}), so a
string that moves between widgets keeps its translation. Uses the lupdate/lrelease that PySide6 ships.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_DIR = ROOT / "app" / "ui"
TRANSLATIONS = ROOT / "resources" / "translations"
TS_FILE = TRANSLATIONS / "gguf_launcher_zh_CN.ts"
QM_FILE = TRANSLATIONS / "gguf_launcher_zh_CN.qm"
GLOSSARY = TRANSLATIONS / "zh_CN.json"


def qt_tool(name: str) -> Path:
    import PySide6

    return Path(PySide6.__file__).parent / name


def ui_sources() -> list[str]:
    return sorted(str(p) for p in UI_DIR.rglob("*.py"))


def run_lupdate(ts_path: Path) -> None:
    cmd = [str(qt_tool("lupdate")), "-silent", "-no-obsolete", "-locations", "none", "-target-language", "zh_CN",
           *ui_sources(), "-ts", str(ts_path)]
    subprocess.run(cmd, check=True, capture_output=True)


def messages(ts_path: Path) -> list[tuple[str, ET.Element]]:
    tree = ET.parse(ts_path)
    return [(msg.findtext("source") or "", msg) for msg in tree.getroot().iter("message")]


def contexts(ts_path: Path) -> list[tuple[str, str, ET.Element]]:
    """(context, source, message) for every message: Qt looks translations up by both."""
    found = []
    for context in ET.parse(ts_path).getroot().iter("context"):
        name = context.findtext("name") or ""
        for msg in context.iter("message"):
            found.append((name, msg.findtext("source") or "", msg))
    return found


def extracted_pairs() -> set[tuple[str, str]]:
    """Every (context, string) app/ui passes to tr()/translate(), as lupdate sees it right now."""
    with tempfile.TemporaryDirectory() as tmp:
        ts = Path(tmp) / "check.ts"
        run_lupdate(ts)
        return {(context, source) for context, source, _ in contexts(ts)}


def extracted_sources() -> set[str]:
    return {source for _context, source in extracted_pairs()}


def fill(ts_path: Path, glossary: dict[str, str]) -> list[str]:
    """Write glossary translations into the .ts; return the sources still untranslated."""
    tree = ET.parse(ts_path)
    missing = []
    for msg in tree.getroot().iter("message"):
        source = msg.findtext("source") or ""
        text = glossary.get(source)
        translation = msg.find("translation")
        if not text:
            missing.append(source)
            continue
        translation.attrib.pop("type", None)
        if msg.get("numerus") == "yes":
            for child in list(translation):
                translation.remove(child)
            translation.text = None
            form = ET.SubElement(translation, "numerusform")  # Chinese has a single plural form
            form.text = text
        else:
            translation.text = text
    tree.write(ts_path, encoding="utf-8", xml_declaration=True)
    return missing


def run_lrelease(ts_path: Path, qm_path: Path) -> None:
    subprocess.run([str(qt_tool("lrelease")), "-silent", str(ts_path), "-qm", str(qm_path)], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report strings without a translation")
    args = parser.parse_args(argv)
    glossary = json.loads(GLOSSARY.read_text(encoding="utf-8")) if GLOSSARY.exists() else {}
    if args.check:
        missing = sorted(s for s in extracted_sources() if not glossary.get(s))
        for source in missing:
            print(f"untranslated: {source!r}")
        return 1 if missing else 0
    run_lupdate(TS_FILE)
    missing = fill(TS_FILE, glossary)
    partial = QM_FILE.with_suffix(".qm.part")
    run_lrelease(TS_FILE, partial)
    os.replace(partial, QM_FILE)  # lrelease empties its output first: a reader never sees a half-written .qm
    for source in missing:
        print(f"untranslated: {source!r}")
    print(f"{TS_FILE.relative_to(ROOT)}: {len(messages(TS_FILE))} strings, {len(missing)} untranslated; "
          f"compiled {QM_FILE.relative_to(ROOT)}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
