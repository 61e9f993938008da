"""Generated status documentation: ``docs/ops.md``, ``docs/constraints.md`` (which spec constraint
ids the verifier's checks cite) and the status summary in ``README.md``.

    python -m stablehlo_ref.docs            rewrite docs/ops.md, docs/constraints.md and the README status section
    python -m stablehlo_ref.docs --check    exit 1 (and say which) when either is stale
    python -m stablehlo_ref.docs --generated-counts   also rebuild the generated suite's case counts

Every row is computed from the spec (``spec/``) and the code's registries, never edited by
hand:

* parse+print: ``pretty`` when the op's spec holds an assembly format whose custom
  directives the parser and printer both implement, or the text package has a hand-written
  parser for it; ``partial`` when the format uses a directive that one side lacks; ``generic``
  when only MLIR's generic form (which always works) is available.
* verify: the op has an entry in ``stablehlo_ref.verifier.VERIFIERS`` (``no`` while that
  registry does not exist).
* interpret: the op has a kernel in ``stablehlo_ref.interpreter.registry.KERNELS``, or the
  evaluator runs it itself (:data:`EVALUATOR_OPS`).
* VHLO read / write: the VHLO encodings the serializer maps to the op
  (``stablehlo_ref.serialization.vhlo_ops()``); without that package, the encodings the spec
  defines.
* corpus cases: the number of upstream test cases (``// -----`` chunks of
  ``interpret/*.mlir``, files of ``testdata/**``) in ``../shared/stablehlo-tests`` that name the
  op.  That folder is not part of the project, so this column is the only one that depends on
  the machine: without the folder the previous counts are kept, and the staleness check
  ignores the column.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from . import spec as _spec

__all__ = ["EVALUATOR_OPS", "OpStatus", "op_statuses", "render_ops_md", "render_constraints_md", "render_summary",
           "update_readme", "corpus_counts", "kernel_names", "verifier_names", "main",
           "BEGIN", "END", "mask_corpus_column"]

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "stablehlo-tests"
OPS_MD = Path("docs") / "ops.md"
CONSTRAINTS_MD = Path("docs") / "constraints.md"
README = Path("README.md")
BEGIN = "<!-- status:begin -->"
END = "<!-- status:end -->"

# Ops the evaluator runs itself rather than through a kernel (see interpreter/evaluator.py):
# function bodies are entered by Interpreter.call, terminators end a block.
EVALUATOR_OPS = {"func.func": "function: its body is run by Interpreter.call",
                 "sdy.mesh": "declaration: read by the ops whose shardings name the mesh",
                 **{t: "terminator: handled by the evaluator" for t in sorted(_spec.terminators())}}

COLUMNS = ("op", "status", "since", "parse+print", "verify", "interpret", "VHLO read", "VHLO write",
           "generated cases", "element types", "corpus cases")
# per-op case counts of the generated conformance suite (conformance/generated, full), written
# by this module from the generator; tests/test_conformance_generated.py checks it is current
GENERATED_COUNTS = Path("conformance") / "generated" / "counts.json"
# per-op element types those cases exercise (conformance/generated/coverage.py)
GENERATED_TYPES = Path("conformance") / "generated" / "types.json"

_DIALECT_TITLES = {"stablehlo": "StableHLO", "chlo": "CHLO", "func": "func", "check": "check (test dialect)", "sdy": "Shardy (sdy)"}


# --------------------------------------------------------------------------- registries


def kernel_names() -> Set[str]:
    """Op names with an interpreter kernel (the package registers them when imported)."""
    from .interpreter import registry
    return set(registry.KERNELS)


def verifier_names() -> Optional[Set[str]]:
    """Op names with a verifier, or None while ``stablehlo_ref.verifier.VERIFIERS`` does not exist."""
    try:
        mod = importlib.import_module("stablehlo_ref.verifier")
    except ImportError:
        return None
    reg = getattr(mod, "VERIFIERS", None)
    if not isinstance(reg, Mapping):
        return None
    # the per-op verifiers register themselves when their modules are imported
    for m in pkgutil.iter_modules(getattr(mod, "__path__", ())):
        try:
            importlib.import_module(f"{mod.__name__}.{m.name}")
        except Exception:  # noqa: BLE001 - a broken module simply registers nothing
            pass
    return set(reg)


def _serialization_registry() -> Optional[Dict[str, tuple]]:
    """The serializer's op mapping (op name -> the VHLO op names it reads, oldest first; the
    last is the one it writes), or None without ``stablehlo_ref.serialization``."""
    try:
        from .serialization import vhlo_ops
    except ImportError:
        return None
    return vhlo_ops()


def parse_print_status(o: "_spec.OpSpec") -> str:
    from .text.custom_syntax import OP_SYNTAX
    from .text.directives import DIRECTIVES
    from .text.format_ast import compile_format
    if o.name in OP_SYNTAX:
        return "pretty"
    if not o.syntax.format:
        return "generic"
    try:
        elems = compile_format(o.syntax.format)
    except Exception:  # noqa: BLE001 - a format the compiler rejects cannot be used
        return "generic"
    if set(_custom_directives(elems)) <= set(DIRECTIVES):
        return "pretty"
    return "partial"


def _custom_directives(elems) -> Iterable[str]:
    from .text.format_ast import Custom, Optional_
    for e in elems:
        if isinstance(e, Custom):
            yield e.name
        elif isinstance(e, Optional_):
            yield from _custom_directives(e.elems)
            yield from _custom_directives(e.else_elems or ())


# --------------------------------------------------------------------------- corpus counts


_OP_REF = re.compile(r"(?<![\w.@#!$%])((?:stablehlo|chlo|func|check)\.[A-Za-z_][\w\-]*)")
_BARE_RETURN = re.compile(r"^\s*return\b", re.M)
_BARE_CALL = re.compile(r"(?:^|=)\s*call\s+@", re.M)
_CHUNK = re.compile(r"^// -----.*$", re.M)


def corpus_counts(root: Path = SHARED) -> Optional[Dict[str, int]]:
    """Upstream test cases naming each op, or None when the corpus folder is absent."""
    dirs = [(root / "interpret", "*.mlir"), (root / "testdata", "**/*.mlir")]
    if not any(d.is_dir() for d, _ in dirs):
        return None
    known = {o.name for o in _spec.ops()}
    counts: Dict[str, int] = {}
    for d, pattern in dirs:
        for path in sorted(d.glob(pattern)):
            text = path.read_text(encoding="utf-8", errors="replace")
            for chunk in _CHUNK.split(text):
                names = {m for m in _OP_REF.findall(chunk) if m in known}
                if _BARE_RETURN.search(chunk):
                    names.add("func.return")
                if _BARE_CALL.search(chunk):
                    names.add("func.call")
                for n in names:
                    counts[n] = counts.get(n, 0) + 1
    return counts


def _previous_counts(path: Path) -> Dict[str, str]:
    """The corpus column of an existing ops.md, so regenerating without the corpus keeps it."""
    out: Dict[str, str] = {}
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = _row_cells(line)
        if cells and len(cells) == len(COLUMNS):
            out[cells[0].strip("`")] = cells[-1]
    return out


def _row_cells(line: str) -> Optional[List[str]]:
    if not line.startswith("| `"):
        return None
    return [c.strip() for c in line.strip().strip("|").split("|")]


def mask_corpus_column(text: str) -> str:
    """The text with every op row's corpus-cases cell replaced by "-" (for comparisons)."""
    out = []
    for line in text.splitlines():
        cells = _row_cells(line)
        if cells and len(cells) == len(COLUMNS):
            line = "| " + " | ".join(cells[:-1] + ["-"]) + " |"
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


# --------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class OpStatus:
    name: str
    dialect: str
    status: str
    since: str
    parse_print: str      # pretty | partial | generic
    verify: bool
    interpret: str        # kernel | evaluator | no
    vhlo_encodings: tuple  # VHLO names, oldest first
    vhlo_read: Optional[bool]   # None: stablehlo_ref.serialization is not importable
    vhlo_write: Optional[bool]
    corpus: str           # a count, or "-"
    generated: str = "-"  # cases of the generated suite (full), or "-"
    types: str = "-"      # element types those cases exercise / the spec admits, or "-"


def generated_counts(repo: Path = REPO) -> Dict[str, int]:
    """Per-op case counts of the full generated suite, as last written to counts.json."""
    import json
    path = repo / GENERATED_COUNTS
    if not path.is_file():
        return {}
    return {k: int(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def render_generated_counts() -> str:
    """counts.json from the generator itself (slow: builds the full suite)."""
    return render_generated_files()[0]


def render_generated_files():
    """(counts.json, types.json) from one run of the generator (slow: builds the full suite)."""
    import json
    from .conformance.generated import generate_cases
    from .conformance.generated.coverage import render_types_json
    cases = generate_cases(full=True)
    counts: Dict[str, int] = {}
    for c in cases:
        counts[c.op] = counts.get(c.op, 0) + 1
    return json.dumps(dict(sorted(counts.items())), indent=1) + "\n", render_types_json(cases)


def generated_types(repo: Path = REPO) -> Dict[str, List[str]]:
    """Per-op covered element types of the full generated suite, as last written to types.json."""
    import json
    path = repo / GENERATED_TYPES
    if not path.is_file():
        return {}
    return {k: list(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def op_statuses(corpus: Optional[Mapping[str, int]] = None,
                previous: Optional[Mapping[str, str]] = None,
                generated: Optional[Mapping[str, int]] = None,
                types: Optional[Mapping[str, List[str]]] = None) -> List[OpStatus]:
    """One record per spec op.  ``corpus``: counts from :func:`corpus_counts`; when None,
    ``previous`` (name -> cell) supplies the column, else it is "-"."""
    kernels = kernel_names()
    verifiers = verifier_names() or set()
    gen = generated if generated is not None else generated_counts()
    covered = types if types is not None else generated_types()
    from .conformance.generated.coverage import coverage_cell
    ser = _serialization_registry()
    rows = []
    for o in _spec.ops():
        if o.name in kernels:
            interp = "kernel"
        elif o.name in EVALUATOR_OPS:
            interp = "evaluator"
        else:
            interp = "no"
        enc = tuple(v.name for v in o.vhlo)
        read = write = None
        if ser is not None:
            enc = tuple(ser.get(o.name, ()))
            read = write = bool(enc)
        if corpus is not None:
            c = str(corpus.get(o.name, 0))
        else:
            c = (previous or {}).get(o.name, "-")
        rows.append(OpStatus(o.name, o.dialect, o.status, o.since, parse_print_status(o),
                             o.name in verifiers, interp, enc, read, write, c,
                             str(gen[o.name]) if o.name in gen else "-", coverage_cell(o.name, covered)))
    return rows


def _short(vhlo_name: str) -> str:
    return vhlo_name.rsplit("_", 1)[-1]  # vhlo.dot_general_v2 -> v2


def _vhlo_cells(r: OpStatus):
    if not r.vhlo_encodings:
        return "—", "—"
    return ", ".join(_short(n) for n in r.vhlo_encodings), _short(r.vhlo_encodings[-1])


def _cells(r: OpStatus) -> List[str]:
    read, write = _vhlo_cells(r)
    return [f"`{r.name}`", r.status, r.since, r.parse_print, "yes" if r.verify else "no",
            {"kernel": "yes", "evaluator": "yes (evaluator)", "no": "no"}[r.interpret], read, write, r.generated,
            r.types, r.corpus]


def render_ops_md(rows: Sequence[OpStatus]) -> str:
    ser_registry = any(r.vhlo_read is not None for r in rows)
    out = [
        "# Op status",
        "",
        "<!-- Generated by `python -m stablehlo_ref.docs` from spec/ and the code's registries; do not edit. -->",
        "",
        "One row per op of the spec (`spec/ops/`).",
        "",
        "- **status**: `spec` (in the StableHLO specification), `legacy` (kept for compatibility, not in",
        "  the specification), `chlo`, `func`, `check` (the upstream test dialect); **since**: the",
        "  StableHLO version that introduced the op.",
        "- **parse+print**: `pretty` = the pretty syntax is parsed and printed; `partial` = the spec'd",
        "  format uses a directive not implemented on both sides; `generic` = generic form only (which",
        "  every op supports).",
        "- **verify**: an op-specific verifier is registered (`stablehlo_ref.verifier.VERIFIERS`).",
        "- **interpret**: the reference interpreter has a kernel (or runs the op itself).",
    ]
    if ser_registry:
        out += [
            "- **VHLO read / write**: the VHLO encodings the portable-artifact reader maps to the op",
            "  (`stablehlo_ref.serialization.vhlo_ops()`: read, every one; write, the current one at",
            "  the current version; older targets downgrade). `—`: the serializer has no VHLO form for it.",
        ]
    else:
        out += [
            "- **VHLO read / write**: the VHLO encodings the spec defines (read: every one; write: the",
            "  current one); no serializer is registered yet. `—`: the op has no VHLO form.",
        ]
    out += [
        "- **generated cases**: cases of the generated conformance suite (`--suite generated --full`,",
        "  conformance/generated) whose op under test is this op; `-`: no generator yet.",
        "- **element types**: of the element types the spec admits for the op (its operand class, read",
        "  as the verifier reads it), how many its generated cases exercise",
        "  (`conformance/generated/coverage.py`); the admitted types without a case are listed, each",
        "  with a reason, in `tests/known_failures/generated_type_gaps.txt`.",
        "- **corpus cases**: upstream test cases (chunks of `interpret/`, files of `testdata/`) in",
        "  `../shared/stablehlo-tests` that use the op, counted when this file was generated.",
        "",
    ]
    for d in _spec.DIALECTS:
        drows = [r for r in rows if r.dialect == d]
        if not drows:
            continue
        out += [f"## {_DIALECT_TITLES.get(d, d)} ({len(drows)} ops)", "",
                "| " + " | ".join(COLUMNS) + " |", "|" + "|".join(" --- " for _ in COLUMNS) + "|"]
        out += ["| " + " | ".join(_cells(r)) + " |" for r in drows]
        out.append("")
    return "\n".join(out)


def render_constraints_md() -> str:
    """docs/constraints.md: per op, each numbered constraint of its spec entry and whether a check
    of its verifier cites that id (read from the verifier's source, verifier/citations.py)."""
    from .verifier.citations import constraint_coverage
    cov = constraint_coverage()
    total = sum(len(v) for v in cov.values())
    cited = sum(ok for v in cov.values() for _, ok in v)
    out = [
        "# Verifier constraint coverage",
        "",
        "<!-- Generated by `python -m stablehlo_ref.docs` from spec/ and the verifier's source; do not edit. -->",
        "",
        "Every numbered constraint of an op's spec entry (`spec/ops/**`, `constraints:`) and whether a",
        "check in `stablehlo_ref/verifier` cites its id: `check(cond, \"C3\", ...)` in the op's",
        "checking function or a helper it calls (`stablehlo_ref.verifier.citations`).",
        "tests/test_verifier_constraint_ids.py fails while any id is not cited, and while a check cites",
        "an id the op's spec entry does not have. Checks that the spec leaves implicit (type",
        "well-formedness, region signatures, upstream's extra rules) report no id.",
        "",
        f"{cited} of {total} constraint ids cited, over {len(cov)} ops.",
        "",
        "| op | constraints | cited | not cited |",
        "| --- | --- | --- | --- |",
    ]
    for name in sorted(cov):
        rows = cov[name]
        missing = [c for c, ok in rows if not ok]
        out.append(f"| `{name}` | {len(rows)} | {' '.join(c for c, ok in rows if ok) or '—'} | "
                   f"{' '.join(missing) if missing else '—'} |")
    out.append("")
    return "\n".join(out)


def _group(r: OpStatus) -> str:
    if r.dialect == "stablehlo":
        return "stablehlo (legacy)" if r.status == "legacy" else "stablehlo"
    return r.dialect


def render_summary(rows: Sequence[OpStatus]) -> str:
    """The README's status table: per dialect, how many ops have each capability."""
    groups: Dict[str, List[OpStatus]] = {}
    for r in rows:
        groups.setdefault(_group(r), []).append(r)
    ser_registry = any(r.vhlo_read is not None for r in rows)
    vhlo_head = "VHLO read+write" if ser_registry else "VHLO encoding (spec)"

    def line(name, rs):
        if ser_registry:
            vh = str(sum(bool(r.vhlo_read and r.vhlo_write) for r in rs))
        else:
            vh = str(sum(bool(r.vhlo_encodings) for r in rs))
        return (f"| {name} | {len(rs)} | {sum(r.parse_print == 'pretty' for r in rs)} | "
                f"{sum(r.verify for r in rs)} | {sum(r.interpret != 'no' for r in rs)} | {vh} |")

    out = [
        "Generated by `python -m stablehlo_ref.docs` from the spec and the code's registries; per-op",
        "detail in [docs/ops.md](docs/ops.md).",
        "",
        f"| dialect | ops | pretty parse+print | verify | interpret | {vhlo_head} |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    order = ["stablehlo", "stablehlo (legacy)", "chlo", "func", "check"]
    for g in order + sorted(set(groups) - set(order)):
        if g in groups:
            out.append(line(g, groups[g]))
    out.append(line("**total**", list(rows)))
    return "\n".join(out)


def update_readme(readme_text: str, summary: str) -> str:
    """``readme_text`` with the part between the status markers replaced by ``summary``."""
    b, e = readme_text.find(BEGIN), readme_text.find(END)
    if b < 0 or e < 0 or e < b:
        raise ValueError(f"README.md lacks the markers {BEGIN} ... {END}")
    return readme_text[:b + len(BEGIN)] + "\n" + summary + "\n" + readme_text[e:]


# --------------------------------------------------------------------------- command


NOT_IMPLEMENTED_MD = Path("docs/not_implemented.md")


def _literal(node) -> str:
    """A raise's argument as the message reads: f-string fields as `{expr}`."""
    import ast
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    return "{" + ast.unparse(node) + "}"


def not_implemented_sites(repo: Path = REPO) -> List[Tuple[str, str, str]]:
    """(file, function, message) of every `raise NotImplementedOpError(...)` in the package, in
    source order: the list of what refuses to run with a `not implemented: ...` error."""
    import ast
    out = []
    for path in sorted((repo / "stablehlo_ref").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = []

        def visit(node, fn):
            for child in ast.iter_child_nodes(node):
                name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
                if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call) and \
                        getattr(child.exc.func, "id", None) == "NotImplementedOpError" and child.exc.args:
                    what = _literal(child.exc.args[0])
                    detail = _literal(child.exc.args[1]) if len(child.exc.args) > 1 else ""
                    found.append((child.lineno, name or "(module)",
                                  f"not implemented: {what}" + (f" ({detail})" if detail else "")))
                visit(child, name)

        visit(tree, None)
        out.extend((path.relative_to(repo).as_posix(), fn, msg) for _, fn, msg in sorted(found))
    return out


def render_not_implemented_md(repo: Path = REPO) -> str:
    lines = ["# What raises `not implemented`", "",
             "Generated by `python -m stablehlo_ref.docs` from the sources: every place that refuses",
             "a program with `not implemented: ...` (exit 1, with the op's location) instead of",
             "computing a result. `{op.name}`, `{et}` and the like stand for the op and element type",
             "at hand; dtype guards behind the verifier's type constraints only trigger with",
             "`--no-verify`.", "",
             "| file | function | message |", "| --- | --- | --- |"]
    for f, fn, msg in not_implemented_sites(repo):
        lines.append(f"| `{f}` | `{fn}` | {msg.replace('|', '&#124;')} |")
    return "\n".join(lines) + "\n"


def generate(repo: Path = REPO, shared: Path = SHARED, generated: bool = False) -> Dict[Path, str]:
    """The new contents of docs/ops.md and README.md (by path), and with `generated` of
    conformance/generated/counts.json (rebuilt from the generator: slow; without it the
    committed counts are used, and the slow generated-suite test checks they are current)."""
    import json
    ops_md = repo / OPS_MD
    counts = corpus_counts(shared)
    gen_text, types_text = render_generated_files() if generated else (None, None)
    rows = op_statuses(counts, None if counts is not None else _previous_counts(ops_md),
                       json.loads(gen_text) if gen_text else None,
                       json.loads(types_text) if types_text else None)
    readme = repo / README
    out = {repo / GENERATED_COUNTS: gen_text, repo / GENERATED_TYPES: types_text} if gen_text else {}
    return {**out,
            ops_md: render_ops_md(rows),
            repo / CONSTRAINTS_MD: render_constraints_md(),
            repo / NOT_IMPLEMENTED_MD: render_not_implemented_md(repo),
            readme: update_readme(readme.read_text(encoding="utf-8"), render_summary(rows))}


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stablehlo_ref.docs",
                                description="Regenerate docs/ops.md and the README status section.")
    p.add_argument("--check", action="store_true", help="only report whether the files are current")
    p.add_argument("--generated-counts", action="store_true",
                   help="also rebuild conformance/generated/counts.json from the generator (a few minutes)")
    args = p.parse_args(argv)
    if not (REPO / README).is_file() or not (REPO / "spec").is_dir():
        print(f"error: {REPO} is not a stablehlo-ref checkout (no README.md and spec/)", file=sys.stderr)
        return 2
    try:
        new = generate(REPO, SHARED, generated=args.generated_counts and not args.check)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stale = []
    for path, text in new.items():
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        same = old is not None and (mask_corpus_column(old) == mask_corpus_column(text))
        if args.check:
            if not same:
                stale.append(path.relative_to(REPO).as_posix())
        elif old != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO).as_posix()}")
    if stale:
        print(f"stale: {', '.join(stale)}; run `python -m stablehlo_ref.docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
