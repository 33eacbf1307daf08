"""The house has no import cycles: no module in app/ reaches itself through imports.

Every import counts, wherever it stands: at module level, inside a function (a "late" import only hides a cycle
until the function runs) and under ``if TYPE_CHECKING:`` (a cycle in the design even where Python never runs it).
The layer rules (core imports no Qt, no ui, no cli) are import-linter contracts in pyproject.toml (scripts/lint.sh)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import ROOT

APP = ROOT / "app"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(APP.rglob("*.py"))}


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The app modules one import statement names: ``from pkg import sub`` names the submodule when there is one."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    names = []
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        names.append(submodule if submodule in known else source)
    return names


def _import_graph() -> tuple[dict[str, dict[str, int]], dict[str, Path]]:
    """module -> {imported app module: line of the first such import}."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(node, name, path.name == "__init__.py", known):
                # `import app.core.gguf.reader` also names its packages; only the deepest known module is the edge
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].setdefault(target, node.lineno)
    return graph, modules


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def _describe(component: list[str], graph: dict[str, dict[str, int]], modules: dict[str, Path]) -> str:
    members = set(component)
    lines = [" <-> ".join(component)]
    for name in component:
        for target, line in sorted(graph[name].items()):
            if target in members:
                lines.append(f"    {modules[name].relative_to(ROOT)}:{line} imports {target}")
    return "\n".join(lines)


def test_the_cycle_finder_sees_function_level_imports_and_every_member():
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}, "e": {"e": 1}}
    assert _cycles(graph) == [["a", "b", "c"]]
    tree = ast.parse("def f():\n    from app.core.gguf import reader\n    from . import split\n")
    known = {"app.core.gguf", "app.core.gguf.reader", "app.core.gguf.split"}
    found = [
        target
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for target in _imported(node, "app.core.gguf.other", False, known)
    ]
    assert found == ["app.core.gguf.reader", "app.core.gguf.split"]


def test_no_import_cycle_in_app():
    graph, modules = _import_graph()
    assert len(modules) > 50, "the scan found too few modules: is APP the app/ folder?"
    cycles = _cycles(graph)
    assert not cycles, "import cycles in app/ (break each: move the shared part down, or pass it in):\n" + "\n".join(
        _describe(component, graph, modules) for component in cycles
    )
