"""The package's imports run one way: bytes/text -> IR -> verify | interpret | write. This walks
the import graph of the installed package with `ast` (every import statement, module level or
inside a function) and fails on a cycle between modules.

Edges are `import a.b` / `from a import b` statements resolved to modules of the package; the
implicit import of a parent package's `__init__` when a submodule is loaded is not an edge."""
from __future__ import annotations

import ast
import importlib.util
import pkgutil

import pytest

import stablehlo_ref

# Lazy imports that may close a cycle, each with the reason it is allowed: (importer, imported).
ALLOWED = {
    ("stablehlo_ref.ir.core", "stablehlo_ref.text.printer"):
        "Module.__str__ prints the module in MLIR's pretty form (imported when str() is called)",
}
MAPPED = ("serialization", "conformance")


def _modules() -> dict:
    """module name -> source path, for every module of the installed package."""
    out = {"stablehlo_ref": importlib.util.find_spec("stablehlo_ref").origin}
    roots = [(list(stablehlo_ref.__path__), "stablehlo_ref.")]
    # folders of the repo installed under stablehlo_ref (an editable install maps them by a
    # finder, so they are not below stablehlo_ref.__path__ there)
    for sub in MAPPED:
        spec = importlib.util.find_spec(f"stablehlo_ref.{sub}")
        assert spec is not None, f"stablehlo_ref.{sub} is not installed"
        out[f"stablehlo_ref.{sub}"] = spec.origin
        roots.append((list(spec.submodule_search_locations), f"stablehlo_ref.{sub}."))
    for path, prefix in roots:
        for info in pkgutil.walk_packages(path, prefix):
            spec = importlib.util.find_spec(info.name)
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                out[info.name] = spec.origin
    return out


def _resolve(importer: str, is_pkg: bool, node, mods) -> list:
    targets = []
    if isinstance(node, ast.Import):
        for a in node.names:
            parts = a.name.split(".")
            for i in range(len(parts), 0, -1):
                if ".".join(parts[:i]) in mods:
                    targets.append(".".join(parts[:i]))
                    break
        return targets
    if node.level:
        base = importer.split(".") if is_pkg else importer.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    for a in node.names:
        sub = f"{mod}.{a.name}"
        if sub in mods:
            targets.append(sub)
        elif mod in mods:
            targets.append(mod)
    return targets


def import_graph() -> dict:
    mods = _modules()
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        is_pkg = path.endswith("__init__.py")
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _resolve(m, is_pkg, node, mods):
                    if t != m and (m, t) not in ALLOWED:
                        graph[m].add(t)
    return graph


def _cycles(graph: dict) -> list:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10000))
    try:
        for v in sorted(graph):
            if v not in index:
                strong(v)
    finally:
        sys.setrecursionlimit(old)
    return comps


def _path_in(graph, comp):
    """A concrete cycle inside a component, for the message."""
    start = comp[0]
    inside = set(comp)
    prev = {start: None}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v] & inside):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return " -> ".join(reversed(path)) + f" -> {start}"
            if w not in prev:
                prev[w] = v
                todo.append(w)
    return ", ".join(comp)


def test_the_graph_is_real():
    g = import_graph()
    assert "stablehlo_ref.text.parser" in g and "stablehlo_ref.serialization" in g
    assert "stablehlo_ref.ir.core" in g["stablehlo_ref.text.parser"]


def test_no_import_cycle():
    g = import_graph()
    comps = _cycles(g)
    assert not comps, "import cycles:\n" + "\n".join(_path_in(g, c) for c in comps)


def test_allowed_edges_still_exist():
    """An allowed lazy import that is gone must leave the list."""
    mods = _modules()
    for importer, imported in ALLOWED:
        assert importer in mods and imported in mods, (importer, imported)


def test_cycle_detection_works():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
