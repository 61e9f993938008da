"""Every constraint id a verifier can report exists in the spec entry of the op it verifies.

Statically: for each op in the `VERIFIERS` registry, walk the AST of its checking function and of
every function it reaches by name (in the verifier package and the `ir` helpers it imports),
collecting the string literals shaped like a constraint id (`C12`). The collection over-reaches
(a helper's literals count for every op that calls it), never under-reaches, so long as ids are
literals: the walk also rejects any `check(...)` whose id argument is computed, and any
f-string or %-format that builds an id. Dynamically: every error the ops corpus gets names a
constraint of its op's spec entry."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import SHARED, corpus_files  # noqa: E402

from stablehlo_ref import parse, spec  # noqa: E402
from stablehlo_ref.errors import StableHLOError  # noqa: E402
from stablehlo_ref.verifier import VERIFIERS, collect  # noqa: E402

_CID = re.compile(r"C\d+")


@lru_cache(maxsize=None)
def _module_ast(modname: str):
    mod = importlib.import_module(modname)
    tree = ast.parse(Path(inspect.getsourcefile(mod)).read_text())
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names = {}      # local name -> (module, function name) for functions imported by name
    modules = {}    # local name -> module name for `from . import quantized`
    for n in tree.body:
        if isinstance(n, ast.ImportFrom):
            base = importlib.util.resolve_name("." * n.level + (n.module or ""), mod.__package__) if n.level else n.module
            for a in n.names:
                local = a.asname or a.name
                obj = getattr(importlib.import_module(base), a.name, None)
                if inspect.ismodule(obj):
                    modules[local] = obj.__name__
                else:
                    names[local] = (base, a.name)
    return defs, names, modules


def _tracked(modname: str) -> bool:
    return modname.startswith("stablehlo_ref.verifier") or modname.startswith("stablehlo_ref.ir")


def _resolve(modname, node):
    """The (module, function) a Name / module.attr expression denotes, if it is a tracked function."""
    defs, names, modules = _module_ast(modname)
    if isinstance(node, ast.Name):
        if node.id in defs:
            return modname, node.id
        if node.id in names and _tracked(names[node.id][0]):
            m, f = names[node.id]
            if f in _module_ast(m)[0]:
                return m, f
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
        m = modules[node.value.id]
        if _tracked(m) and node.attr in _module_ast(m)[0]:
            return m, node.attr
    return None


def _is_check(node) -> bool:
    """`check(...)` or `check.fail(...)` / `check.something(...)`."""
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "check") or (
        isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "check")


@lru_cache(maxsize=None)
def _function_facts(modname: str, fname: str):
    """(constraint-id literals, reached functions, computed id arguments) of one function."""
    fn = _module_ast(modname)[0][fname]
    ids, reached, computed = set(), set(), []
    for node in ast.walk(fn):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CID.fullmatch(node.value):
            ids.add(node.value)
        if isinstance(node, (ast.Name, ast.Attribute)):
            r = _resolve(modname, node)
            if r is not None and r != (modname, fname):
                reached.add(r)
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                and node.values[0].value == "C" and len(node.values) > 1:
            computed.append(f"{modname}.{fname} line {node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"C%\w", node.value):
            computed.append(f"{modname}.{fname} line {node.lineno}: {node.value!r}")
        if isinstance(node, ast.Call) and _is_check(node):
            args = node.args[1:2] if isinstance(node.func, ast.Name) else node.args[:1]
            for a in args:
                if not isinstance(a, (ast.Constant, ast.Name)):
                    computed.append(f"{modname}.{fname} line {a.lineno}: {ast.unparse(a)}")
    return frozenset(ids), frozenset(reached), tuple(computed)


def reportable_ids(fn):
    """Every constraint-id literal reachable from checking function `fn`, and computed ids found."""
    start = (fn.__module__, fn.__name__)
    seen, todo, ids, computed = set(), [start], set(), []
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        i, reached, comp = _function_facts(*key)
        ids |= i
        computed.extend(comp)
        todo.extend(reached)
    return ids, computed


def cited_ids_not_in_spec():
    """[(op, id)] for each id a verifier may report that its op's spec entry lacks."""
    out = []
    for name, fn in sorted(VERIFIERS.items()):
        have = {c.id for c in spec.op(name).constraints} if spec.has_op(name) else set()
        ids, _ = reportable_ids(fn)
        out.extend((name, cid) for cid in sorted(ids, key=lambda c: int(c[1:])) if cid not in have)
    return out


def test_verifier_functions_found():
    for name, fn in VERIFIERS.items():
        assert fn.__name__ in _module_ast(fn.__module__)[0], f"{name}: {fn.__module__}.{fn.__name__} not a top-level def"


def test_constraint_ids_are_literals():
    computed = set()
    for fn in set(VERIFIERS.values()):
        computed.update(reportable_ids(fn)[1])
    assert not computed, "constraint ids passed to check must be literals (or names bound to literals):\n  " + \
        "\n  ".join(sorted(computed))


def test_every_cited_id_is_in_the_ops_spec_entry():
    missing = cited_ids_not_in_spec()
    assert not missing, f"{len(missing)} cited id(s) not in the spec:\n  " + "\n  ".join(f"{o} {c}" for o, c in missing)


OPS_FILES = corpus_files("ops")


@pytest.mark.skipif(not OPS_FILES, reason="../shared/stablehlo-tests not present")
def test_reported_ids_exist_in_spec():
    from test_verifier import split_chunks
    bad = set()
    for rel in OPS_FILES:
        for chunk in split_chunks((SHARED / rel).read_text()):
            try:
                module = parse(chunk, rel)
            except StableHLOError:
                continue
            for e in collect(module):
                cid = e.constraint
                if cid and not (spec.has_op(e.op.name) and cid in {c.id for c in spec.op(e.op.name).constraints}):
                    bad.add(f"{e.op.name} {cid}")
    assert not bad, "reported ids missing from the spec: " + ", ".join(sorted(bad))


if __name__ == "__main__":
    m = cited_ids_not_in_spec()
    for o, c in m:
        print(o, c)
    print(len(m), "cited ids not in spec")
