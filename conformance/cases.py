"""Conformance cases: a StableHLO program whose `@main` a backend runs, its inputs, the
expected outputs and a comparison rule per output.

Cases are built from upstream-style test programs, whose results are checked inside the
program by `check` dialect ops (`check.expect_eq_const %x, dense<...>`) or by
`stablehlo.custom_call @check.*(...)` calls. `extract_cases` rewrites each checked function
into a plain `@main` that returns the checked (actual) values instead, and keeps what each
check compared against as the expected value: the constant it names when there is one,
otherwise (two computed values) the value our reference interpreter computes, marked
`expected_from="reference"`. Complex outputs are returned as real and imaginary parts, so
that backends which cannot return complex tensors (jaxlib's bindings of upstream's
interpreter) can run them; the comparison of a complex check holds per part anyway."""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from stablehlo_ref.errors import StableHLOError

from stablehlo_ref.interpreter.check import (ALMOST_EQ_TOLERANCE as DIALECT_ALMOST_EQ_TOLERANCE,
                                             CUSTOM_CALL_ALMOST_EQ_TOLERANCE, CUSTOM_CALL_CLOSE_ULPS,
                                             DIALECT_CLOSE_ULPS, EQ_TOLERANCE)

# the tolerances of the reference's check ops (stablehlo_ref/interpreter/check.py)
DIALECT_CLOSE_MAX_ULP = DIALECT_CLOSE_ULPS[1]
CUSTOM_CALL_CLOSE_MAX_ULP = CUSTOM_CALL_CLOSE_ULPS[1]

# ops every program has; left out of a case's op list so the per-op summary names the ops
# under test
TRIVIAL_OPS = frozenset({"builtin.module", "func.func", "func.return", "func.call",
                         "stablehlo.return", "stablehlo.constant"})


class NotRunnable(StableHLOError):
    """A test program (or one function of it) has a shape that cannot be turned into a case:
    no checks, checks inside regions, arguments, a `check` op with no plain meaning..."""


@dataclass(frozen=True)
class Rule:
    """How one output is compared. `exact` (integers, booleans, and any output of an exact
    check); `atol` (floats within `atol`, NaN equals NaN, complex parts separately); `ulp`
    (floats within `max_ulp` units in the last place; NaN equals NaN); `close` (user
    programs: within `max_ulp` ULP or within `atol + rtol * |expected|`). Integer outputs
    are always compared exactly, whatever the rule. Two property rules, for outputs whose
    values the spec leaves to the implementation: `shape` (only the shape and element type
    are checked) and `range` (every element in [lo, hi); NaN fails)."""
    kind: str                  # exact | atol | ulp | close | shape | range
    atol: float = 0.0
    max_ulp: int = 0
    check: str = ""            # the upstream check this rule came from
    rtol: float = 0.0
    lo: float = 0.0            # `range`: the bounds [lo, hi)
    hi: float = 0.0

    def describe(self) -> str:
        if self.kind == "shape":
            return "shape and element type only"
        if self.kind == "range":
            return f"every element in [{self.lo:g}, {self.hi:g})"
        if self.kind == "atol":
            return f"|actual - expected| <= {self.atol:g}"
        if self.kind == "ulp":
            return f"within {self.max_ulp} ULP"
        if self.kind == "close":
            return f"within {self.max_ulp} ULP or |actual - expected| <= {self.atol:g} + {self.rtol:g}*|expected|"
        return "exact"

    def to_json(self):
        d = {"kind": self.kind, "atol": self.atol, "max_ulp": self.max_ulp, "check": self.check}
        if self.rtol:
            d["rtol"] = self.rtol
        if self.kind == "range":
            d["lo"], d["hi"] = self.lo, self.hi
        return d


@dataclass
class Feed:
    """Values the host puts on a process's infeed queue for one execution of an infeed op:
    that op's results before its token, in order, each with its MLIR tensor type (quantized
    values: the storage integers, the type names the quantization). A case's feeds are
    consumed in list order per process: the first feed of process (0, 0) goes to the first
    infeed op that process executes, and so on."""
    values: List[np.ndarray]
    types: List[str]                      # "tensor<2x3xbf16>", one per value
    process: Tuple[int, int] = (0, 0)     # (replica_id, partition_id)


@dataclass
class Case:
    id: str                               # "<corpus>/<file>#<chunk>@<function>"
    program: str                          # StableHLO text with one `func.func @main`
    inputs: List[np.ndarray]
    expected: List[np.ndarray]
    element_types: List[str]              # per output, the storage element type name
    rules: List[Rule]
    labels: List[str] = field(default_factory=list)           # "0", "1.real", ...
    expected_from: List[str] = field(default_factory=list)    # constant | reference
    ops: Tuple[str, ...] = ()             # op names the program uses (trivial ones left out)
    # What the case exercises and where its expectation comes from. Upstream-program cases
    # leave op/element_type/variant empty (their `ops` says what they use); generated cases
    # fill them: op "stablehlo.add", element_type "bf16", variant "broadcast_dims=[0]" or "".
    op: str = ""
    element_type: str = ""
    variant: str = ""
    oracle: str = ""                      # how `expected` was computed (e.g. "python-int", "mpmath")
    provenance: str = ""                  # where the case comes from (corpus path, generator + seed)
    # Multi-process cases: `@main` is the program of every process of a num_replicas x
    # num_partitions grid (StableHLO's SPMD model; replica_id/partition_id tell them apart).
    # `inputs` then holds every process's arguments in process order (replica-major: (0, 0),
    # (0, 1), ..., (1, 0), ...), `expected`/`element_types`/`rules`/`labels` every process's
    # results in the same order; labels read "r<replica>p<partition>.<result>".
    num_replicas: int = 1
    num_partitions: int = 1
    # Host-fed infeed values (stablehlo.infeed): each process's queue, in order (see Feed).
    # Backends run such cases through `Backend.run_infeed`; empty for every other case.
    infeed: List[Feed] = field(default_factory=list)

    @property
    def source(self) -> str:
        return self.id.split("#", 1)[0]

    @property
    def num_processes(self) -> int:
        return self.num_replicas * self.num_partitions


def process_labels(n_results: int, num_replicas: int = 1, num_partitions: int = 1) -> List[str]:
    """Output labels of a case whose processes return `n_results` values each: "0", "1", ...
    for one process, "r<replica>p<partition>.<result>" in process order otherwise."""
    if num_replicas * num_partitions == 1:
        return [str(i) for i in range(n_results)]
    return [f"r{r}p{p}.{i}" for r in range(num_replicas) for p in range(num_partitions) for i in range(n_results)]


# ---------------------------------------------------------------------------- extraction

_SPLIT = re.compile(r"^// -----.*$", re.M)


def _split_chunks(text: str) -> List[str]:
    from stablehlo_ref.checkrun import split_chunks
    return split_chunks(text)


def _is_check(op) -> bool:
    if op.name.startswith("check."):
        return True
    if op.name == "stablehlo.custom_call":
        t = op.attributes.get("call_target_name")
        return t is not None and str(getattr(t, "value", "")).startswith("check.")
    return False


def _check_name(op) -> str:
    if op.name == "stablehlo.custom_call":
        return "@" + op.attributes["call_target_name"].value
    return op.name


def _symbol_refs(attr, out: set):
    from stablehlo_ref.ir.attributes import ArrayAttr, DictAttr, SymbolRefAttr
    if isinstance(attr, SymbolRefAttr):
        out.add(attr.root)
    elif isinstance(attr, ArrayAttr):
        for a in attr.elements:
            _symbol_refs(a, out)
    elif isinstance(attr, DictAttr):
        for _, a in attr.entries:
            _symbol_refs(a, out)


def _reachable(module, root: str) -> List[str]:
    fns = module.functions
    seen, todo = [], [root]
    while todo:
        name = todo.pop()
        if name in seen or name not in fns:
            continue
        seen.append(name)
        refs: set = set()
        for op in fns[name].walk():
            if op is fns[name]:
                continue
            for a in op.attributes.values():
                _symbol_refs(a, refs)
        todo.extend(sorted(refs))
    return seen


def _constant_of(value, module):
    """The numpy value of `value` when it is a constant (a `stablehlo.constant`, or the
    result of calling a function that only returns constants); else None."""
    from stablehlo_ref.ir.attributes import DenseElementsAttr
    owner = value.owner
    if owner is None or not hasattr(owner, "attributes"):
        return None
    if owner.name == "stablehlo.constant":
        v = owner.attributes.get("value")
        return np.asarray(v.array) if isinstance(v, DenseElementsAttr) else None
    if owner.name == "func.call":
        callee = owner.attributes.get("callee")
        fn = module.functions.get(getattr(callee, "root", None))
        if fn is None or not fn.regions or len(fn.regions[0].blocks) != 1:
            return None
        block = fn.regions[0].blocks[0]
        ret = block.terminator
        if ret is None or any(o.name != "stablehlo.constant" for o in block.operations[:-1]):
            return None
        return _constant_of(ret.operands[value.index], module)
    return None


def _fit(exp: np.ndarray, t) -> np.ndarray:
    """A constant in the checked value's shape (splats and scalars broadcast)."""
    shape = tuple(getattr(t, "shape", ()) or ())
    if exp.shape == shape or any(d is None for d in shape):
        return exp
    if exp.size == int(np.prod(shape, dtype=np.int64)):
        return exp.reshape(shape)
    if exp.size == 1:
        return np.broadcast_to(exp.reshape(()), shape).copy()
    return exp


def _rule_for(op, et) -> Rule:
    """The comparison rule of one check op (upstream's semantics; for `expect_close` only the
    upper ULP bound: a backend more accurate than upstream's reference is conformant)."""
    name = _check_name(op)
    short = name.split(".", 1)[1]
    is_cc = name.startswith("@")
    floaty = et.is_float or et.is_complex
    if short in ("expect_eq", "expect_eq_const", "eq"):
        if not floaty:
            return Rule("exact", check=name)
        tol = DIALECT_ALMOST_EQ_TOLERANCE if short == "eq" else EQ_TOLERANCE
        return Rule("atol", atol=tol, check=name)
    if short in ("expect_almost_eq", "expect_almost_eq_const"):
        if not floaty:
            return Rule("exact", check=name)
        t = op.attributes.get("tolerance")
        default = CUSTOM_CALL_ALMOST_EQ_TOLERANCE if is_cc else DIALECT_ALMOST_EQ_TOLERANCE
        return Rule("atol", atol=float(t.value) if t is not None else default, check=name)
    if short == "expect_close":
        if not floaty:
            return Rule("exact", check=name)
        if is_cc:
            return Rule("ulp", max_ulp=CUSTOM_CALL_CLOSE_MAX_ULP, check=name)
        mx = op.attributes.get("max_ulp_difference")
        return Rule("ulp", max_ulp=int(mx.value) if mx is not None else DIALECT_CLOSE_MAX_ULP, check=name)
    raise NotRunnable(f"{name} has no value comparison to turn into a case")


def _case_from_function(chunk: str, filename: str, fname: str, case_id: str) -> Case:
    from stablehlo_ref.interpreter.numerics import elem
    from stablehlo_ref.ir.attributes import DenseElementsAttr, StringAttr, TypeAttr
    from stablehlo_ref.ir.core import Operation
    from stablehlo_ref.ir.types import FunctionType, TensorType, ELEMENT_TYPES
    from stablehlo_ref.text import parse, print_module

    module = parse(chunk, filename)        # a fresh copy per function: it is rewritten
    fns = module.functions
    func = fns[fname]
    keep = _reachable(module, fname)
    if fname != "main" and "main" in keep:
        raise NotRunnable(f"@{fname} calls @main")
    block = func.regions[0].blocks[0]
    checks = [op for op in block.operations if _is_check(op)]
    if not checks:
        raise NotRunnable(f"@{fname} has no checks")
    for name in keep:
        for op in fns[name].walk():
            if _is_check(op) and not (name == fname and op in checks):
                raise NotRunnable(f"@{fname}: a check inside a region or a called function")
    for name in keep:
        for op in fns[name].walk():
            if op.dialect == "interpreter":
                raise NotRunnable(f"@{fname} uses {op.name} (a simulated process grid): for interpreters only")
    ret = block.terminator
    ret_names = ("func.return", "return")
    if ret is None or ret.name not in ret_names:
        raise NotRunnable(f"@{fname} does not end in a return")
    check_results = {id(r) for op in checks for r in op.results}
    for name in keep:
        for op in fns[name].walk():
            if op is ret or op in checks:
                continue
            if any(id(v) in check_results for v in op.operands):
                raise NotRunnable(f"@{fname}: the result of a check is used")

    actual_vals, expected, rules, ets, froms, labels, ref_vals = [], [], [], [], [], [], []
    for i, op in enumerate(checks):
        if not op.operands:
            raise NotRunnable(f"{_check_name(op)} without operands")
        _rule_for(op, elem(op.operands[0].type))      # refuses checks with no comparison
        if op.name.endswith("_const"):
            v = op.attributes.get("value")
            if not isinstance(v, DenseElementsAttr):
                raise NotRunnable(f"{op.name}: expected value is not a dense constant")
            act, exp, src = op.operands[0], np.asarray(v.array), "constant"
        else:
            if len(op.operands) < 2:
                raise NotRunnable(f"{_check_name(op)} with {len(op.operands)} operand(s)")
            a, b = op.operands[0], op.operands[1]
            ca, cb = _constant_of(a, module), _constant_of(b, module)
            if cb is None and ca is not None:       # `@check.eq(%expected_const, %actual)`
                a, b, cb = b, a, ca
            act = a
            if cb is not None:
                exp, src = cb, "constant"
            else:
                exp, src = b, "reference"
        et = elem(act.type)
        rule = _rule_for(op, et)
        if isinstance(exp, np.ndarray):
            exp = _fit(exp, act.type)
        actual_vals.append(act)
        expected.append(exp)
        rules.append(rule)
        ets.append(et)
        froms.append(src)
        if src == "reference":
            ref_vals.append((i, exp))

    ops = sorted({op.name for name in keep for op in fns[name].walk()
                  if op.name not in TRIVIAL_OPS and not _is_check(op)})

    # the rewrite: checks removed, @main returns the checked values
    block.operations = [op for op in block.operations if op not in checks]
    for name in list(fns):
        if name not in keep:
            module.body.operations.remove(fns[name])

    def set_returns(values):
        ft = func.attributes["function_type"].type
        ret.operands = list(values)
        func.attributes["function_type"] = TypeAttr(FunctionType(tuple(ft.inputs), tuple(v.type for v in values)))
        func.attributes.pop("res_attrs", None)

    if ref_vals:      # expected values only a computation gives: ask our interpreter
        from stablehlo_ref.interpreter import Interpreter
        set_returns([v for _, v in ref_vals])
        try:
            outs = Interpreter(module).call(fname, [])
        except StableHLOError as e:
            raise NotRunnable(f"the reference interpreter cannot compute the expected value: "
                              f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        for (i, _), o in zip(ref_vals, outs):
            expected[i] = np.asarray(o)
        for op in module.walk():           # the interpreter caches plans on ops and blocks
            op._cache = None
            for r in op.regions:
                for b in r.blocks:
                    b._cache = None

    # complex outputs as real and imaginary parts
    values, out_exp, out_rules, out_ets, out_froms = [], [], [], [], []
    extra_ops = []
    for i, (v, exp, rule, et, src) in enumerate(zip(actual_vals, expected, rules, ets, froms)):
        if not et.is_complex:
            values.append(v)
            out_exp.append(np.asarray(exp))
            out_rules.append(rule)
            out_ets.append(et.name)
            out_froms.append(src)
            labels.append(str(i))
            continue
        part = ELEMENT_TYPES["f32" if et.name == "complex<f32>" else "f64"]
        pt = TensorType(tuple(v.type.shape), part)
        for kind in ("real", "imag"):
            op = Operation(f"stablehlo.{kind}", [v], [pt], location=ret.location)
            extra_ops.append(op)
            values.append(op.results[0])
            out_exp.append(np.array(getattr(np.asarray(exp), kind), dtype=part.dtype))
            out_rules.append(rule)
            out_ets.append(part.name)
            out_froms.append(src)
            labels.append(f"{i}.{kind}")
    block.operations[-1:-1] = extra_ops
    set_returns(values)
    func.attributes["sym_name"] = StringAttr("main")
    func.attributes.pop("sym_visibility", None)
    program = print_module(module)
    return Case(case_id, program, [], out_exp, out_ets, out_rules, labels, out_froms, tuple(ops))


def extract_cases(text: str, source: str, errors: Optional[list] = None) -> List[Case]:
    """All cases of one upstream-style test file: one per checked argument-less public
    function of each `// -----` chunk, with id `<source>#<chunk>@<function>` (the ids the
    corpus tests and known-failure lists use). Functions that cannot become a case are
    reported into `errors` as (id, reason) when given."""
    from stablehlo_ref.checkrun import entry_functions
    from stablehlo_ref.text import parse
    out = []
    for ci, chunk in enumerate(_split_chunks(text)):
        if "check." not in chunk:
            continue
        try:
            module = parse(chunk, source)
        except StableHLOError as e:
            if errors is not None:
                errors.append((f"{source}#{ci}@", f"parse error: {str(e).splitlines()[0]}"))
            continue
        names = entry_functions(module)
        if not names and errors is not None:
            errors.append((f"{source}#{ci}@", "no argument-less public function"))
        for name in names:
            cid = f"{source}#{ci}@{name}"
            try:
                out.append(_case_from_function(chunk, source, name, cid))
            except NotRunnable as e:
                if errors is not None:
                    errors.append((cid, str(e)))
            except StableHLOError as e:
                if errors is not None:
                    errors.append((cid, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
    return out


def corpus_files(dirs: Sequence[str]) -> List[Tuple[str, Path]]:
    """(case-id prefix, path) of every `*.mlir` under each corpus directory; the prefix is
    the path relative to the directory's parent (`testdata/quantized/x.mlir`)."""
    out = []
    for d in dirs:
        root = Path(d)
        if root.is_file():
            out.append((root.name, root))
            continue
        if not root.is_dir():
            raise FileNotFoundError(d)
        base = root.resolve().parent
        for p in sorted(root.resolve().rglob("*.mlir")):
            out.append((p.relative_to(base).as_posix(), p))
    return out


def _file_may_match(rel: str, pattern: str) -> bool:
    """Whether some case id of file `rel` may match `pattern` (to skip parsing files)."""
    if "#" in pattern:
        return fnmatch.fnmatchcase(rel, pattern.split("#", 1)[0])
    return True


def load_cases(dirs: Sequence[str], pattern: Optional[str] = None, op: Optional[str] = None,
               errors: Optional[list] = None) -> List[Case]:
    """The cases of the given corpus directories (or files), filtered by a glob on case ids
    and/or an op name (`add` or `stablehlo.add`). A folder written by `export_cases` (it
    holds `cases.json`) is read as it is."""
    want_op = None
    if op:
        want_op = op if "." in op else f"stablehlo.{op}"
    cases = []
    exported = [d for d in dirs if (Path(d) / INDEX).is_file()]
    for d in exported:
        for c in load_exported(d):
            if pattern and not fnmatch.fnmatchcase(c.id, pattern):
                continue
            if want_op and want_op not in c.ops:
                continue
            cases.append(c)
    dirs = [d for d in dirs if d not in exported]
    for rel, path in corpus_files(dirs):
        if pattern and not _file_may_match(rel, pattern):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            if errors is not None:
                errors.append((rel, f"cannot read: {e}"))
            continue
        for c in extract_cases(text, rel, errors):
            if pattern and not fnmatch.fnmatchcase(c.id, pattern):
                continue
            if want_op and want_op not in c.ops:
                continue
            cases.append(c)
    return cases


def strip_checks(text: str, source: str = "<input>"):
    """The benchmarks' view of one upstream test program: (text of a `@main` that returns
    the checked values, their labels). Raises NotRunnable when the file holds no single
    such case."""
    errors: list = []
    cases = extract_cases(text, source, errors)
    if len(cases) != 1:
        why = errors[0][1] if errors else f"{len(cases)} cases"
        raise NotRunnable(why)
    return cases[0].program, cases[0].labels


# ---------------------------------------------------------------------------- cases as files

INDEX = "cases.json"


def _file_stem(case_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", case_id)


def export_cases(cases: Sequence[Case], directory: str) -> str:
    """Write cases as plain files, for backends driven from outside Python: per case
    `<stem>.mlir` (the program) and `<stem>.npz` (`input_<i>`, `expected_<i>`), plus an index
    `cases.json` with ids, file names, element types, labels and rules. Returns the index
    path. `load_cases([directory])` reads such a folder back."""
    import json
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    index = {"format": "stablehlo-ref conformance cases", "version": 1, "cases": []}
    used: Dict[str, int] = {}
    for c in cases:
        stem = _file_stem(c.id)
        n = used.get(stem, 0)
        used[stem] = n + 1
        if n:
            stem = f"{stem}~{n}"
        (out / f"{stem}.mlir").write_text(c.program, encoding="utf-8")
        arrays = {f"input_{i}": np.asarray(a) for i, a in enumerate(c.inputs)}
        arrays.update({f"expected_{i}": np.asarray(a) for i, a in enumerate(c.expected)})
        arrays.update({f"infeed_{k}_{i}": np.asarray(a) for k, f in enumerate(c.infeed) for i, a in enumerate(f.values)})
        np.savez(out / f"{stem}.npz", **{k: _portable(v) for k, v in arrays.items()})
        index["cases"].append({"id": c.id, "program": f"{stem}.mlir", "arrays": f"{stem}.npz",
                               "inputs": len(c.inputs), "element_types": c.element_types,
                               "labels": c.labels, "expected_from": c.expected_from,
                               "rules": [r.to_json() for r in c.rules], "ops": list(c.ops),
                               "num_replicas": c.num_replicas, "num_partitions": c.num_partitions})
        if c.infeed:
            index["cases"][-1]["infeed"] = [{"process": [int(x) for x in f.process], "types": list(f.types)}
                                            for f in c.infeed]
    path = out / INDEX
    tmp = out / f".{INDEX}.tmp"
    tmp.write_text(json.dumps(index, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return str(path)


def _portable(a: np.ndarray) -> np.ndarray:
    """npz keeps only numpy's own dtypes: ml_dtypes arrays (bf16, f8, i4...) are stored as
    their raw bits (unsigned integers of the same width); the index's element type says how
    to read them."""
    if a.dtype.kind == "V" or type(a.dtype).__module__.startswith("ml_dtypes") or a.dtype.name not in np.sctypeDict:
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


def _from_portable(a: np.ndarray, et_name: Optional[str]) -> np.ndarray:
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    et = ELEMENT_TYPES.get(et_name or "")
    if et is not None and a.dtype != et.dtype and a.dtype.kind == "u" and a.dtype.itemsize == et.dtype.itemsize:
        return a.view(et.dtype)
    return a


def _feed_element_type(tensor_type: str) -> str:
    """`tensor<2x3xbf16>` -> `bf16` (quantized types: "", their storage integers are stored as they are)."""
    m = re.match(r"tensor<(?:(?:\d+)x)*([^x<>][^<>]*)>$", tensor_type.strip())
    return m.group(1) if m and not m.group(1).startswith("!") else ""


def load_exported(directory: str) -> List[Case]:
    import json
    d = Path(directory)
    try:
        index = json.loads((d / INDEX).read_text(encoding="utf-8"))
        out = []
        for e in index["cases"]:
            with np.load(d / e["arrays"], allow_pickle=False) as z:
                inputs = [z[f"input_{i}"] for i in range(e["inputs"])]
                expected = [_from_portable(z[f"expected_{i}"], et) for i, et in enumerate(e["element_types"])]
                feeds = [Feed([_from_portable(z[f"infeed_{k}_{i}"], _feed_element_type(t)) for i, t in enumerate(f["types"])],
                              list(f["types"]), tuple(f.get("process", (0, 0)))) for k, f in enumerate(e.get("infeed", []))]
            rules = [Rule(r["kind"], r.get("atol", 0.0), r.get("max_ulp", 0), r.get("check", ""), r.get("rtol", 0.0)) for r in e["rules"]]
            out.append(Case(e["id"], (d / e["program"]).read_text(encoding="utf-8"), inputs, expected,
                            list(e["element_types"]), rules, list(e.get("labels", [])),
                            list(e.get("expected_from", [])), tuple(e.get("ops", ())),
                            num_replicas=int(e.get("num_replicas", 1)), num_partitions=int(e.get("num_partitions", 1)),
                            infeed=feeds))
        return out
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise NotRunnable(f"{d}: not a readable case folder ({type(e).__name__}: {e})") from None
