"""Which app/core package imports which, and the package cycles (knots) among them.

    .venv/bin/python scripts/core_packages.py        # one line per package, then the knots
    .venv/bin/python scripts/core_packages.py -v     # and every import inside a knot, with file and line

Every import counts, as in the module-level cycle test (tests/unit/test_architecture.py, whose scanner this reuses):
at module level, inside a function and under ``if TYPE_CHECKING:``. A top-level module (app/core/text.py) is a
package of its own here. The rule itself is the layers contract in pyproject.toml (scripts/lint.sh).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.unit.test_architecture import _cycles, _import_graph  # noqa: E402


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["app", "core"] and len(parts) > 2 else None


def package_imports() -> dict[tuple[str, str], list[str]]:
    """(importer package, imported package) -> "file:line -> module" for each import between two packages."""
    graph, modules = _import_graph()
    edges: dict[tuple[str, str], list[str]] = {}
    for module, targets in graph.items():
        source = _package(module)
        for target, line in targets.items():
            imported = _package(target)
            if source and imported and imported != source:
                where = modules[module].relative_to(ROOT).as_posix()
                edges.setdefault((source, imported), []).append(f"{where}:{line} -> {target}")
    return edges


def main(argv: list[str]) -> int:
    edges = package_imports()
    packages = sorted({name for pair in edges for name in pair} | {
        path.stem for path in (ROOT / "app" / "core").iterdir() if path.name != "__init__.py" and
        (path.suffix == ".py" or (path / "__init__.py").exists())})
    graph = {name: {b: 1 for (a, b) in edges if a == name} for name in packages}
    for name in packages:
        print(f"{name}: {', '.join(sorted(graph[name])) or '-'}")
    knots = _cycles(graph)
    print(f"knots: {len(knots)}; sizes: {[len(knot) for knot in knots]}")
    for knot in knots:
        print("  " + " <-> ".join(knot))
        if "-v" in argv:
            for (a, b), found in sorted(edges.items()):
                if a in knot and b in knot:
                    print(f"    {a} -> {b}: " + "; ".join(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
