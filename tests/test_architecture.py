"""The package's shape: no import cycles, small modules, and the layering DESIGN.md promises.

Imports are read from the source with :mod:`ast`, so these tests need no Spark and see imports
inside functions too. Imports under ``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "qtt"
MAX_LINES = 600


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


@cache
def _imports(name: str) -> frozenset[str]:
    """Every module ``name`` imports (qtt modules by module name, others by top-level name)."""
    path = _modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        for alias in node.names:
            # ``from qtt.plan import codec`` imports the module qtt.plan.codec
            out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in _modules() else base)
    return frozenset(out)


def _qtt_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {m for m in _imports(name) if m in modules and m != name} for name in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_import_cycle_between_modules() -> None:
    cycles = _cycles(_qtt_graph())
    assert not cycles, "modules that import each other (directly or around a loop): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_is_over_the_size_limit(name: str) -> None:
    lines = len(_modules()[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it along its jobs (limit {MAX_LINES})"


@pytest.mark.parametrize("name", [n for n in sorted(_modules()) if not n.startswith("qtt.runtime")])
def test_only_the_runtime_imports_pyspark(name: str) -> None:
    spark = sorted(m for m in _imports(name) if m == "pyspark" or m.startswith("pyspark."))
    assert not spark, f"{name} imports {spark}; only qtt.runtime may import pyspark (STYLE.md rule 1)"


def test_loading_a_plan_never_reaches_the_grammar() -> None:
    # Only the planner reads SQL; what decodes a persisted plan must not depend on the grammar.
    graph = _qtt_graph()
    reached, todo = set(), ["qtt.plan.codec"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(graph[name])
    grammar = sorted(m for m in reached if m == "qtt.sql" or m.startswith("qtt.sql."))
    assert not grammar, f"qtt.plan.codec reaches {grammar}: a grammar change could break old plans"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_two_modules_share_a_name(name: str) -> None:
    leaf = name.rpartition(".")[2]
    if name == "qtt" or _modules()[name].name == "__init__.py":
        return
    same = [n for n in _modules() if n != name and n.rpartition(".")[2] == leaf and _modules()[n].name != "__init__.py"]
    assert not same, f"{name} shares its name with {same}; name each module for its stage"


def test_internal_column_names_are_spelled_once() -> None:
    # runtime/names.py is the one table of the columns qtt adds next to a query's own.
    home = PACKAGE / "runtime" / "names.py"
    spelled = [
        f"{p.relative_to(PACKAGE.parent)}:{n}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if p != home
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "__qtt_" in line
    ]
    assert not spelled, f"internal column names spelled outside qtt/runtime/names.py: {spelled}"
