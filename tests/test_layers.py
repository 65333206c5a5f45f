"""The package's floors: each module imports only from its own floor or the floors below, and no
import, those inside functions included, closes a cycle (CONTRIBUTING.md, "The floors")."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "sqlmetrics"

# Bottom to top: a module may import from its floor and the ones below it, never above.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("_version", "errors", "gc_paused", "attrs"),
    ("catalog",),
    ("render",),
    ("io",),
    ("compose",),
    ("stats",),
    ("engines",),
    ("api", "run", "trec", "trec_measures", "options", "off_policy", "sampling"),
    ("dbt", "reporting"),
    ("cli",),
)


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Imports under ``if TYPE_CHECKING:`` exist for annotations only: they never run."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(child) for child in ast.walk(node)}
    return skipped


def _imported(
    module: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]
) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, *([base] if base else [])])
    # ``from package import module`` imports that module; ``from module import name``, the module
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
        for alias in node.names
    ]


def import_graph() -> dict[str, set[str]]:
    """Every module's imports of other sqlmetrics modules, wherever in the module they are."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
                for target in _imported(name, path, node, modules):
                    # a module's own package (its __init__) is not an import of another floor,
                    # but the top package is: it imports every entry point
                    own_package = name.startswith(target + ".") and target != "sqlmetrics"
                    if target in modules and target != name and not own_package:
                        graph[name].add(target)
    return graph


def floor(module: str) -> int | None:
    """The floor of ``sqlmetrics.<top>...``; None for the package's own __init__ (the top)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    for level, names in enumerate(FLOORS):
        if parts[1] in names:
            return level
    raise AssertionError(f"{module} is on no floor: add its package to FLOORS")


def test_every_module_is_on_a_floor() -> None:
    for module in import_graph():
        floor(module)


def test_no_import_goes_up_a_floor() -> None:
    upward = [
        f"{module} (floor {floor(module)}) imports {target} (floor {floor(target)})"
        for module, targets in import_graph().items()
        if floor(module) is not None
        for target in targets
        if floor(target) is None or floor(target) > floor(module)  # type: ignore[operator]
    ]
    assert not upward, "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle() -> None:
    cycles = _cycles(import_graph())
    assert not cycles, "\n".join(" <-> ".join(cycle) for cycle in cycles)


def test_the_checks_find_a_cycle_and_an_upward_import() -> None:
    """The walk itself: a cycle and an import up the floors are seen (else the tests above
    could pass on a graph that missed every import)."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    graph = import_graph()
    assert "sqlmetrics.compose.plan" in graph["sqlmetrics.compose.query"]
    # an import inside a function counts
    assert "sqlmetrics.trec" in graph["sqlmetrics.cli.markdown"]
    # a name of the top package is an import of the top package, which imports every entry point
    node = ast.parse("from sqlmetrics import __version__").body[0]
    assert isinstance(node, ast.ImportFrom)
    modules = _modules()
    path = modules["sqlmetrics.dbt.package"]
    assert _imported("sqlmetrics.dbt.package", path, node, modules) == ["sqlmetrics"]
    assert floor("sqlmetrics.cli.sql") > floor("sqlmetrics.compose.query")  # type: ignore[operator]
