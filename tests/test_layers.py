"""The package's layers, read from the source with :mod:`ast`.

Imports point downwards only: ``spark/`` -> ``consumer/`` (and ``producer/``) -> ``admin/``
(the Admin requests) -> ``client/`` (the only code touching sockets) -> ``protocol/``,
``records/`` (sans-I/O); ``formats/`` (payload formats, sans-I/O) and ``schema_registry/``
(the schema registry's HTTP client, beside ``client/``) sit below ``spark/`` too;
``testing/`` (the local broker harness) is used by the console tools and tests, never by the
library. Module-level
imports among ``spark_kafka_py`` modules form no cycle. Imports inside functions count for the
layers (they are dependencies too) but not for cycles; ``if TYPE_CHECKING:`` imports count for
neither.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import spark_kafka_py

ROOT = Path(spark_kafka_py.__file__).parent
PACKAGE = "spark_kafka_py"

#: Area (first part under spark_kafka_py, or a top-level library) -> areas it must not import.
FORBIDDEN: Mapping[str, frozenset[str]] = {
    "protocol": frozenset(
        {"admin", "client", "consumer", "producer", "spark", "testing", "socket", "ssl", "pyspark"}
    ),
    "records": frozenset(
        {"admin", "client", "consumer", "producer", "spark", "testing", "socket", "ssl", "pyspark"}
    ),
    "client": frozenset({"admin", "consumer", "producer", "spark", "testing", "pyspark"}),
    "admin": frozenset({"consumer", "producer", "spark", "testing", "pyspark"}),
    "consumer": frozenset({"spark", "testing", "pyspark"}),
    "producer": frozenset({"spark", "testing", "pyspark"}),
    # payload formats (Avro, Protobuf, JSON; the registry framings): sans-I/O like records/
    "formats": frozenset(
        {
            "admin",
            "client",
            "consumer",
            "producer",
            "schema_registry",
            "spark",
            "testing",
            "socket",
            "ssl",
            "pyspark",
            "requests",
            "urllib3",
        }
    ),
    # the schema-registry client (HTTP through requests), beside client/
    "schema_registry": frozenset(
        {"admin", "client", "consumer", "producer", "spark", "testing", "pyspark"}
    ),
}
#: Areas that may open sockets (``socket``, ``ssl``).
SOCKET_AREAS = frozenset({"client", "testing"})
#: Areas that may import ``testing/``: the console tools (``admin_cli`` for the address of
#: ``spark-kafka-py broker start``'s cluster).
TESTING_USERS = frozenset({"testing", "cli", "admin_cli", "demo", "bench"})


@dataclass(frozen=True)
class Import:
    """One import statement's target in module ``source`` (line ``line``)."""

    source: str
    target: str
    line: int
    module_level: bool


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if MODULES[module].name != "__init__.py":
            package.pop()
        package = package[: len(package) - node.level + 1]
        base = ".".join(package + ([base] if base else []))
    for alias in node.names:
        full = f"{base}.{alias.name}"
        yield full if full in MODULES else base


def _imports(module: str) -> Iterator[Import]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))

    def walk(body: list[ast.stmt], module_level: bool) -> Iterator[Import]:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, node):
                    yield Import(module, target, node.lineno, module_level)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        for target in _targets(module, sub):
                            yield Import(module, target, sub.lineno, False)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                yield from walk(node.orelse, module_level)
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, module_level)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                    yield from walk(block, module_level)
                for handler in getattr(node, "handlers", []):
                    yield from walk(handler.body, module_level)

    yield from walk(tree.body, True)


IMPORTS = [imp for module in sorted(MODULES) for imp in _imports(module)]


def _area(name: str) -> str:
    """``protocol`` for ``spark_kafka_py.protocol.schema``; ``socket`` for ``socket``."""
    parts = name.split(".")
    if parts[0] == PACKAGE:
        return parts[1] if len(parts) > 1 else ""
    return parts[0]


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def find_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    """Module-level imports form no cycle. Importing ``a.b.c`` also runs the packages ``a``
    and ``a.b``, except those that already contain the importing module (they run first)."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for imp in IMPORTS:
        if not imp.module_level or imp.target not in MODULES:
            continue
        for node in [*_ancestors(imp.target), imp.target]:
            if node in MODULES and node != imp.source and node not in _ancestors(imp.source):
                graph[imp.source].add(node)
    assert find_cycles(graph) == []


def test_imports_point_downwards() -> None:
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if _area(imp.target) in FORBIDDEN.get(_area(imp.source), ())
    ]
    assert wrong == []


def test_only_client_and_testing_open_sockets() -> None:
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if _area(imp.target) in ("socket", "ssl") and _area(imp.source) not in SOCKET_AREAS
    ]
    assert wrong == []


def test_only_tools_import_testing() -> None:
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if imp.target.startswith(f"{PACKAGE}.testing") and _area(imp.source) not in TESTING_USERS
    ]
    assert wrong == []
