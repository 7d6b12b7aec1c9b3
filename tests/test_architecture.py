"""The package's shape: no import cycles, small modules, small folders, and the layering of docs/architecture.md.

Imports are read from the source with :mod:`ast`, so these tests need no Spark and see imports
inside functions and under ``if TYPE_CHECKING:`` too: a circle that only type checking closes is
still a circle in the design.
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


def _all_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, those under ``if TYPE_CHECKING:`` and inside functions included."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def _run_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The imports that run: those under ``if TYPE_CHECKING:`` left out."""
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
def _imports(name: str, *, typing_too: bool = True) -> frozenset[str]:
    """Every module ``name`` imports (qtt modules by module name, others by top-level name)."""
    path = _modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in _all_imports(tree) if typing_too else _run_imports(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        for alias in node.names:
            # ``from qtt.plan.ir import codec`` imports the module qtt.plan.ir.codec
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
    # a type annotation may name a Spark type; running code outside the runtime may not import it
    spark = sorted(m for m in _imports(name, typing_too=False) if m == "pyspark" or m.startswith("pyspark."))
    assert not spark, f"{name} imports {spark}; only qtt.runtime may import pyspark (docs/style.md)"


def test_loading_a_plan_never_reaches_the_grammar() -> None:
    # Only the planner reads SQL; what decodes a persisted plan must not depend on the grammar.
    graph = _qtt_graph()
    reached, todo = set(), ["qtt.plan.ir.codec"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(graph[name])
    grammar = sorted(m for m in reached if m == "qtt.sql" or m.startswith("qtt.sql."))
    assert not grammar, f"qtt.plan.ir.codec reaches {grammar}: a grammar change could break old plans"


MAX_MODULES_PER_FOLDER = 15

#: Which packages a package may import, beside its own parent, its own children and the
#: foundation modules (:data:`FOUNDATION`). Siblings not listed here are out of bounds: the
#: tree is the map of the architecture (docs/architecture.md, "Layers").
LAYERS: dict[str, set[str]] = {
    "qtt.sql": set(),
    "qtt.topics": set(),
    "qtt.serde": {"qtt.topics"},
    "qtt.plan": {"qtt.sql", "qtt.serde"},
    "qtt.plan.ir": set(),
    "qtt.plan.functions": {"qtt.plan.ir"},
    "qtt.plan.ddl": {"qtt.plan.ir"},
    "qtt.plan.analysis": {"qtt.plan.ir", "qtt.plan.functions"},
    "qtt.plan.planner": {"qtt.plan.ir", "qtt.plan.functions", "qtt.plan.ddl", "qtt.plan.analysis"},
    "qtt.plan.ksqldb": {"qtt.plan.ir", "qtt.plan.functions", "qtt.plan.ddl", "qtt.plan.analysis", "qtt.plan.planner"},
    "qtt.runtime": {"qtt.plan", "qtt.serde", "qtt.topics", "qtt.sql"},
    "qtt.runtime.spark": set(),
    "qtt.runtime.spark.workers": set(),
    "qtt.runtime.spark.source": {"qtt.runtime.spark.workers"},
    "qtt.runtime.aggregates": set(),
    "qtt.runtime.build": {"qtt.runtime.spark"},
    "qtt.runtime.operators": {"qtt.runtime.spark", "qtt.runtime.build", "qtt.runtime.aggregates"},
    "qtt.runtime.execute": {"qtt.runtime.spark", "qtt.runtime.build", "qtt.runtime.operators"},
    "qtt.harness": {"qtt.sql", "qtt.serde", "qtt.topics", "qtt.plan", "qtt.runtime"},
    "qtt.harness.cases": set(),
    "qtt.harness.replay": {"qtt.harness.cases"},
    "qtt.harness.historical": {"qtt.harness.cases", "qtt.harness.replay"},
    "qtt.harness.sqltests": {"qtt.harness.cases", "qtt.harness.replay"},
    "qtt.harness.upkeep": {"qtt.harness.cases", "qtt.harness.replay", "qtt.harness.historical"},
    "qtt.harness.ksqldb": {"qtt.harness.cases", "qtt.harness.replay", "qtt.harness.historical"},
}
#: Modules at the top of the package that every layer may use: they import no other layer.
FOUNDATION = {"qtt", "qtt.errors", "qtt.sqltypes", "qtt.hashable", "qtt.lazy"}
#: The adapters over the harness: they may import anything, and only an adapter imports them.
ADAPTERS = {"qtt.cli", "qtt.bench", "qtt.pytest_plugin"}


def _package_of(name: str) -> str:
    return name if _modules()[name].name == "__init__.py" else name.rpartition(".")[0]


def _allowed(importer: str, imported: str) -> bool:
    """May module ``importer`` import module ``imported`` under :data:`LAYERS`?"""
    if imported in ADAPTERS:
        return importer in ADAPTERS
    if importer in ADAPTERS or imported in FOUNDATION:
        return importer not in FOUNDATION or imported in FOUNDATION
    if importer in FOUNDATION:
        return False
    here, there = _package_of(importer), _package_of(imported)
    chain = here.split(".")
    ancestors = [".".join(chain[:n]) for n in range(len(chain), 1, -1)]
    # within one package, its parent and its children: modules may use each other (no circles)
    if there == here or there in ancestors or there.startswith(here + "."):
        return True
    for level in ancestors:
        allowed = LAYERS.get(level, set())
        if any(there == a or there.startswith(a + ".") for a in allowed):
            return True
    return False


def test_every_package_has_a_layer_rule() -> None:
    packages = {n for n, p in _modules().items() if p.name == "__init__.py" and n != "qtt"}
    ruled = {p for p in packages if any(p == r or p.startswith(r + ".") for r in LAYERS)}
    assert packages == ruled, f"packages without a rule in LAYERS: {sorted(packages - ruled)}"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_imports_follow_the_layers(name: str) -> None:
    wrong = sorted(m for m in _imports(name) if m in _modules() and m != name and not _allowed(name, m))
    assert not wrong, f"{name} imports {wrong}, against the layers in tests/test_architecture.py (LAYERS)"


def test_the_layer_check_refuses_a_sibling_import() -> None:
    assert _allowed("qtt.runtime.operators.joins", "qtt.runtime.build.builder")
    assert not _allowed("qtt.runtime.build.builder", "qtt.runtime.operators.joins")
    assert not _allowed("qtt.plan.ir.codec", "qtt.plan.planner.query_planner")
    assert not _allowed("qtt.serde.values", "qtt.plan.ir.steps")
    assert not _allowed("qtt.harness.replay.runner", "qtt.cli")
    assert not _allowed("qtt.errors", "qtt.plan.ir.steps")


@pytest.mark.parametrize("folder", sorted({p.parent for p in _modules().values()}), ids=str)
def test_no_folder_holds_more_than_fifteen_modules(folder: Path) -> None:
    count = len(list(folder.glob("*.py")))
    assert count <= MAX_MODULES_PER_FOLDER, (
        f"{folder.relative_to(PACKAGE.parent)} holds {count} modules; group them into a subpackage by job"
    )


def _private_imports(name: str) -> list[str]:
    """The ``_``-prefixed names ``name`` imports from other qtt modules."""
    path = _modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in _all_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        if base != "qtt" and not base.startswith("qtt."):
            continue
        found += [f"{base}.{a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_imports_another_modules_private_name(name: str) -> None:
    private = _private_imports(name)
    assert not private, f"{name} imports private names {private}; make them public in their module, or move them"


def test_the_cli_run_command_holds_no_orchestration() -> None:
    # the run session (qtt.harness.session) decides how a selection runs; the CLI parses and prints
    tree = ast.parse((PACKAGE / "cli.py").read_text(encoding="utf-8"))
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_run")
    assert run.end_lineno is not None and run.end_lineno - run.lineno + 1 <= 40
    runners = {"qtt.harness.replay.runner", "qtt.harness.historical.replay", "qtt.harness.historical.restored"}
    assert not (_imports("qtt.cli") & runners), "qtt.cli calls a runner itself; go through qtt.harness.session"
