"""The package's layering, checked from the source: no import cycles, every module importable first.

The import graph is read with ``ast`` from module-level imports only (an
import inside a function runs later, so it cannot form a cycle at import
time; such imports are checked separately: each needs a reason).
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import pytest

import taugrad

PACKAGE_DIR = Path(taugrad.__file__).resolve().parent
SRC_DIR = PACKAGE_DIR.parent

#: third-party packages the package may import inside a function (optional extras)
OPTIONAL = {"matplotlib", "graphviz", "rich", "sklearn", "IPython", "PIL"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC_DIR).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> Dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(tree: ast.AST, module: str, is_package: bool, modules: Set[str]) -> Set[str]:
    """The taugrad modules a list of statements imports (``from a import b`` counts ``a.b`` if it is a module)."""
    found = set()
    for node in tree:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module, is_package)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in modules else base)
    return {m for m in found if m in modules and m != module}


def module_level_statements(tree: ast.Module) -> List[ast.stmt]:
    """Statements run at import: the module body, including inside if/try blocks, not inside defs."""
    out: List[ast.stmt] = []
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    stack.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return out


def import_graph() -> Dict[str, Set[str]]:
    modules = all_modules()
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        deps = imported_modules(module_level_statements(tree), name, path.name == "__init__.py", set(modules))
        # importing a.b.c runs a/__init__ and a/b/__init__ first: the parents are not edges of the module's own
        graph[name] = deps
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One cycle of ``graph`` as a list of modules (first == last), or [] if there is none."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        iters = [iter(sorted(graph[start]))]
        state[start] = 1
        while iters:
            for nxt in iters[-1]:
                if state.get(nxt) == 1:
                    return path[path.index(nxt):] + [nxt]
                if not state.get(nxt):
                    state[nxt] = 1
                    path.append(nxt)
                    iters.append(iter(sorted(graph[nxt])))
                    break
            else:
                iters.pop()
                state[path.pop()] = 2
    return []


def test_find_cycle_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 40  # the scan sees the whole package
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


CORE = "taugrad.tensors.core"
OPS = "taugrad.tensors.ops"
ANYARRAY = "taugrad.tensors.ops.anyarray"
#: what sits above the bottom layer inside the tensor engine
ABOVE_CORE = (OPS, "taugrad.tensors.engine", "taugrad.tensors.methods", "taugrad.tensors.hooks",
              "taugrad.tensors.custom_function", "taugrad.tensors.out_param")
#: the taugrad modules outside the tensor engine that the bottom layer and the ops may use (below both engines)
SHARED_BELOW = {"taugrad.grad_mode"}


def reachable(graph: Dict[str, Set[str]], start: str) -> Set[str]:
    """Every module ``start`` imports, directly or not."""
    seen, stack = set(), [start]
    while stack:
        for dep in graph[stack.pop()]:
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def bottom_layer(graph: Dict[str, Set[str]]) -> List[str]:
    return sorted(m for m in graph if m == CORE or m.startswith(CORE + "."))


def op_families(graph: Dict[str, Set[str]]) -> List[str]:
    return sorted(m for m in graph if m.startswith(OPS + ".") and m != ANYARRAY)


def layer_violations(graph: Dict[str, Set[str]]) -> List[str]:
    """Every import that goes against the tensor engine's layers, as one line each."""
    bad = []
    for low in bottom_layer(graph):  # the bottom layer imports neither ops nor engine, even indirectly
        bad += [f"{low} reaches {m}" for m in sorted(reachable(graph, low)) if m.startswith(ABOVE_CORE)]
        bad += [f"{low} imports {m}" for m in sorted(graph[low])
                if not m.startswith(CORE) and m not in SHARED_BELOW]
    for family in op_families(graph) + [ANYARRAY]:  # ops import only the bottom layer (and anyarray)
        bad += [f"{family} imports {m}" for m in sorted(graph[family])
                if not (m.startswith(CORE) or m == ANYARRAY or m in SHARED_BELOW)]
    for low in ("taugrad.tensors.engine", "taugrad.tensors.hooks"):  # the engine never imports an op
        bad += [f"{low} reaches {m}" for m in sorted(reachable(graph, low))
                if m.startswith((OPS, "taugrad.tensors.methods"))]
    bad += [f"taugrad.graph reaches {m}" for m in sorted(reachable(graph, "taugrad.graph"))
            if m.startswith(("taugrad.tensors", "taugrad.scalar"))]
    return bad


def test_the_layers_hold():
    """tensors/core imports neither ops nor the engine; the op families import only tensors/core (and
    ops/anyarray); the engine never imports an op; the shared graph walk knows neither engine."""
    graph = import_graph()
    assert len(bottom_layer(graph)) >= 15 and len(op_families(graph)) >= 20  # the scan sees the layers
    bad = layer_violations(graph)
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


@pytest.mark.parametrize("low, planted", [
    ("taugrad.tensors.core.node", "taugrad.tensors.ops.trig"),       # bottom layer -> an op family
    ("taugrad.tensors.core.spacing", "taugrad.tensors.engine"),      # bottom layer -> the engine
    ("taugrad.tensors.ops.trig", "taugrad.tensors.ops.explog"),      # one family -> another
    ("taugrad.tensors.ops.softmax", "taugrad.nn.functional"),        # an op -> a library above it
    ("taugrad.tensors.engine", "taugrad.tensors.ops.reduce"),        # the engine -> an op
    ("taugrad.tensors.hooks", "taugrad.tensors.methods"),            # the engine -> the method table
])
def test_a_planted_import_against_the_layers_is_found(low, planted):
    graph = import_graph()
    assert not [line for line in layer_violations(graph) if line.startswith(low + " ")]
    graph[low] = graph[low] | {planted}
    assert [line for line in layer_violations(graph) if line.startswith(low + " ")]


def function_level_imports(path: Path):
    """(line, imported name, source line) for imports inside functions."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source, str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import):
                    for alias in inner.names:
                        yield inner.lineno, alias.name, lines[inner.lineno - 1]
                elif isinstance(inner, ast.ImportFrom) and not inner.level:
                    yield inner.lineno, inner.module or "", lines[inner.lineno - 1]


def test_imports_inside_functions_are_optional_dependencies_or_give_a_reason():
    """An import inside a function is for an optional extra, or says why on its line."""
    unexplained = []
    for name, path in all_modules().items():
        for line, imported, text in function_level_imports(path):
            if imported.split(".")[0] in OPTIONAL or "#" in text:
                continue
            unexplained.append(f"{path.relative_to(SRC_DIR)}:{line}: {text.strip()}")
    assert not unexplained, "imports inside functions without a reason:\n" + "\n".join(unexplained)


@pytest.mark.parametrize("module", sorted(m for m in all_modules() if not m.endswith("__main__")))
def test_every_module_can_be_imported_first(module):
    """Each module imports in a fresh interpreter on its own (no order of imports is assumed).

    ``__main__`` modules are left out: importing one runs the program.
    """
    env = dict(os.environ, PYTHONPATH=str(SRC_DIR))
    result = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1:]
